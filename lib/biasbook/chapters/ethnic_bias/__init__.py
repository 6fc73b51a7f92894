"""Ahn & Oh (2021), language-dependent ethnic bias: the chapter's pipeline.

- :mod:`~biasbook.chapters.ethnic_bias.data`      templates, targets, attributes per language,
  from the authors' word lists (default) or the book's translations
- :mod:`~biasbook.chapters.ethnic_bias.authors`   the authors' published lists (registry resource
  ``ethnic-bias-ahn-oh``, MIT) in the chapter's keys
- :mod:`~biasbook.chapters.ethnic_bias.grammar`   rule-based word forms (a/an, josa, Turkish
  suffixes)
- :mod:`~biasbook.chapters.ethnic_bias.pipeline`  :func:`cb_scores` -> :class:`CBResult`, the
  entry point (also for the mitigation notebook)
- :mod:`~biasbook.chapters.ethnic_bias.runs`      every (model, language) of a profile
- :mod:`~biasbook.chapters.ethnic_bias.tables`    Tables 3, 4, 7 and the distributions, with the
  paper's numbers
- :mod:`~biasbook.chapters.ethnic_bias.figures`   distribution grids and JSD heat maps
- :mod:`~biasbook.chapters.ethnic_bias.mitigation` multilingual, CDA and alignment mitigation

The metric itself is :mod:`biasbook.metrics.cb`.
"""
