"""Ahn & Oh (2021), language-dependent ethnic bias: the chapter's pipeline.

What goes in (word lists and text):

- :mod:`~biasbook.chapters.ethnic_bias.data`      templates, targets, attributes per language,
  from the authors' word lists (default) or the book's translations
- :mod:`~biasbook.chapters.ethnic_bias.languages` one language's lists as a record, and the book's
  translations (``data/ethnic-bias/<code>.yml``)
- :mod:`~biasbook.chapters.ethnic_bias.authors`   the authors' published lists (registry resource
  ``ethnic-bias-ahn-oh``, MIT) in the chapter's keys
- :mod:`~biasbook.chapters.ethnic_bias.grammar`   rule-based word forms (a/an, josa, Turkish
  suffixes)
- :mod:`~biasbook.chapters.ethnic_bias.parallel`  parallel and source-language text of the
  mitigation runs (offline mirror)

What is computed (the CB score and its tables, notebooks 01-03):

- :mod:`~biasbook.chapters.ethnic_bias.pipeline`  :func:`cb_scores` -> :class:`CBResult`, the
  entry point (also for the mitigation notebook)
- :mod:`~biasbook.chapters.ethnic_bias.runs`      every (model, language) of a profile
- :mod:`~biasbook.chapters.ethnic_bias.tables`    Tables 3, 4, 7 and the distributions, with the
  paper's numbers
- :mod:`~biasbook.chapters.ethnic_bias.sensitivity` the English CB score under reworded templates
- :mod:`~biasbook.chapters.ethnic_bias.figures`   distribution grids, JSD heat maps, mitigation
  shares and bias against quality

Mitigation (notebook 04):

- :mod:`~biasbook.chapters.ethnic_bias.mitigation`        one variant of a model (fine-tuned head,
  CDA, random or Procrustes ``W``) built and measured: CB score and held-out perplexity
- :mod:`~biasbook.chapters.ethnic_bias.mitigation_runs`   which rows Tables 2, 5 and 8 need
  (:func:`~.mitigation_runs.plan`) and running them
- :mod:`~biasbook.chapters.ethnic_bias.mitigation_tables` the rows as the paper's tables: each
  against its reference row (relative change, perplexity ratio, ``usable``), distance to English
  (Table 9), the paper's numbers

How sure each number is (intervals over template x attribute cells, paired tests, Holm):

- :mod:`~biasbook.chapters.ethnic_bias.uncertainty`            what every interval shares: record
  fields, printed text, the paper's number inside or not, Holm's family, the smallest p
- :mod:`~biasbook.chapters.ethnic_bias.uncertainty_cb`         CB scores and their differences
  between models (Table 4), the word-list conditions (Table 7)
- :mod:`~biasbook.chapters.ethnic_bias.uncertainty_jsd`        divergences between languages
  (Table 3), their comparisons, the two readings' summaries, the rank agreement with the paper
- :mod:`~biasbook.chapters.ethnic_bias.uncertainty_mitigation` mitigation rows, their changes
  against the reference rows, the perplexity ratio behind ``usable``, Table 9

:mod:`~biasbook.chapters.ethnic_bias.plan` estimates a profile's work for ``biasbook plan``. The
metric itself is :mod:`biasbook.metrics.cb`.
"""
