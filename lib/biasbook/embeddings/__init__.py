"""Static word vectors (gensim ``KeyedVectors``): loading, training, and an explicit report of the
words a vocabulary lacks.

- :mod:`~biasbook.embeddings.vectors`     offline pretrained vectors (GloVe 6B 50d, Bolukbasi's
  word2vec subset) cached as ``KeyedVectors``; ``from_arrays``; ``oov_report``
- :mod:`~biasbook.embeddings.wordsets`    WEAT tests as data (Caliskan's ten, the
  indirect-stereotypes paper's), gendered word pairs for RIPA
- :mod:`~biasbook.embeddings.train`       word2vec and fastText training with gensim, cached
- :mod:`~biasbook.embeddings.glove`       GloVe in PyTorch from a sparse co-occurrence matrix
  (AdaGrad, shuffled mini-batches), cached by content and resumable per epoch
- :mod:`~biasbook.embeddings.benchmarks`  word similarity, categorisation and analogy benchmarks
  (the indirect-stereotypes paper's Table 1), relative change between two models
"""
