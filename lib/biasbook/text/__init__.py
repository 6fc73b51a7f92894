"""Text: corpus readers and tokenisation (:mod:`~biasbook.text.corpora`) and a windowed
co-occurrence kernel (:mod:`~biasbook.text.cooccurrence`) that any chapter may count with."""
