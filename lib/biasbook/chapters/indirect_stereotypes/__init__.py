"""Detecting and mitigating indirect stereotypes in word embeddings (ICLR 2023 submission): BIRM.

- :mod:`.corpus`    the offline stand-in for UMBC WebBase (UN General Debates + IMDB reviews),
  tokenised once, split into sentences, optionally rewritten by CDS
- :mod:`.pipeline`  Original / BIRM / CDS co-occurrence matrices and GloVe vectors per seed,
  cached by content
- :mod:`.example`   Example 1 of the paper (the 6/7 factor) as an editable toy corpus
- :mod:`.tables`    Tables 1-5 (semantic benchmarks, WEAT, RIPA) beside the paper's numbers, and
  the external check of Caliskan's tests
- :mod:`.uncertainty` intervals over target words and training seeds, paired method-vs-Original
  tests with Holm's correction, and whether the paper's number lies inside (issue 24)
"""
