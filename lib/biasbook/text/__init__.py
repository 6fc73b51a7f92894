"""Text: corpus readers, tokenisation and sentence splitting (:mod:`~biasbook.text.corpora`) and
a windowed co-occurrence kernel (:mod:`~biasbook.text.cooccurrence`) that any chapter may count
with: counts of words near gendered words, and sparse word–context matrices for GloVe and BIRM."""
