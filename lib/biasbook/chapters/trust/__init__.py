"""The page "How far to trust a bias number" (``book/trust.ipynb``): what the chapters' intervals
and tests showed, how far their templates and word lists move their metrics, and whether four of
the book's metrics order the same models the same way.

- :mod:`~biasbook.chapters.trust.records`    the chapters' recorded intervals, tests and
  sensitivity rows, summarised (sections 1 and 2)
- :mod:`~biasbook.chapters.trust.probe`      a WEAT-style log-probability probe of a language model
- :mod:`~biasbook.chapters.trust.agreement`  the models, their four metrics with intervals, and
  Kendall's tau between the metrics (section 3)

Unlike a chapter package it reads other chapters' code (HERB, ethnic bias, Bordia & Bowman): the
page is where their metrics meet. It is not a chapter: it has no profile and records nothing.
"""
