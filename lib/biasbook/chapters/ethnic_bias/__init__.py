"""Ahn & Oh (2021), language-dependent ethnic bias: the chapter's pipeline.

- :mod:`~biasbook.chapters.ethnic_bias.data`      templates, targets, attributes per language
- :mod:`~biasbook.chapters.ethnic_bias.grammar`   rule-based word forms (a/an, josa, Turkish
  suffixes)
- :mod:`~biasbook.chapters.ethnic_bias.pipeline`  :func:`cb_scores` -> :class:`CBResult`, the
  entry point (also for the mitigation notebook)

The metric itself is :mod:`biasbook.metrics.cb`.
"""
