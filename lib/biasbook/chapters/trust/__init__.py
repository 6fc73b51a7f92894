"""The page "How far to trust a bias number" (``book/trust.ipynb``): what the chapters' intervals
and tests showed, how far their templates and word lists move their metrics, and whether four of
the book's metrics order the same models the same way.

Sections 1 and 2 read records:

- :mod:`~biasbook.chapters.trust.records`        the chapters' recorded intervals, tests and
  sensitivity rows, summarised

Section 3 measures models, in the order the page runs them:

- :mod:`~biasbook.chapters.trust.probe`          a WEAT-style log-probability probe of a language
  model
- :mod:`~biasbook.chapters.trust.measure`        what every model is asked (the page's grid,
  :class:`~biasbook.chapters.trust.measure.Spec`) and its answers, cached by content
- :mod:`~biasbook.chapters.trust.variants`       the models: base models, HERB 05's toxic epochs,
  ethnic-bias 04's fine-tuned head, each measured
- :mod:`~biasbook.chapters.trust.model_metrics`  the four metrics of every model with their
  intervals over each metric's items
- :mod:`~biasbook.chapters.trust.agreement`      Kendall's tau between the metrics, with intervals
  over the models and over the metrics' items

Unlike a chapter package it reads other chapters' code (HERB, ethnic bias, Bordia & Bowman): the
page is where their metrics meet. It is not a chapter: it has no profile and records nothing.
"""
