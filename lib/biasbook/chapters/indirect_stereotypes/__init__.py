"""Detecting and mitigating indirect stereotypes in word embeddings (ICLR 2023 submission): BIRM.

- :mod:`.corpus`    the offline stand-in for UMBC WebBase (UN General Debates + IMDB reviews),
  tokenised once, split into sentences, optionally rewritten by CDS
- :mod:`.pipeline`  Original / BIRM / CDS co-occurrence matrices and GloVe vectors per seed,
  cached by content
- :mod:`.example`   Example 1 of the paper (the 6/7 factor) as an editable toy corpus
- :mod:`.tables`    Tables 1-5 (semantic benchmarks, WEAT, RIPA) beside the paper's numbers, and
  the external check of Caliskan's tests

How sure the numbers are (issue 24), in the order each builds on the one before:

- :mod:`.word_scores`      each target word's WEAT association per method and seed, checked
  against WEAT's own effect sizes
- :mod:`.intervals`        intervals over target words and training seeds (WEAT, RIPA, Table 1)
- :mod:`.differences`      each method against Original on the same words and seeds, with
  Holm's correction over the chapter's family of comparisons
- :mod:`.interval_tables`  the evaluation notebooks' tables with those intervals and tests, and
  whether the paper's number lies inside
"""
