"""Bordia & Bowman (2019): gender bias in word-level language models.

- :mod:`.data`           defining pairs (Appendix A) and the paper's numbers (Tables 1-3, 5-8)
- :mod:`.corpora`        which text each notebook reads, with which defining set (one reader)
- :mod:`.bias`           co-occurrence bias of a set of documents in the chapter's settings
- :mod:`.corpus_tables`  notebook 01: training-corpus rows, window sweep, top words, Tables 5-8
- :mod:`.sweep_settings` notebook 02: what the sweep is asked to do (per-corpus settings)
- :mod:`.sweep`          notebook 02: vocabularies, warm-up, one LSTM per lambda, generated text
                         (cached with :mod:`biasbook.store`, resumes per lambda)
- :mod:`.sweep_tables`   notebook 02: bias of the generated text, Tables 1-4 and 5-8, trade-off
- :mod:`.uncertainty`    both: intervals over words (one text) and training seeds (a trained
                         model), the paper-in-our-interval check, the Holm-corrected λ test
"""
