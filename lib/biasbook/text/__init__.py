"""Text: corpus readers, tokenisation and sentence splitting (:mod:`~biasbook.text.corpora`), and
windowed co-occurrence counting that any chapter may use: one kernel
(:mod:`~biasbook.text.windows`), counts of words near gendered words
(:mod:`~biasbook.text.cooccurrence`) and sparse word–context matrices for GloVe and BIRM
(:mod:`~biasbook.text.word_context`)."""
