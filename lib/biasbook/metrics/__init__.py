"""Bias metrics as pure functions on arrays (word-vector metrics also take any gensim
``KeyedVectors``):

- :mod:`~biasbook.metrics.weat`  WEAT (Caliskan et al. 2017): statistic, effect size, exact or
  sampled permutation p-value, OOV and not-computable reporting, one table for many tests
- :mod:`~biasbook.metrics.ripa`  RIPA (Ethayarajh et al. 2019) per word from gendered pairs
- :mod:`~biasbook.metrics.herb`  HERB (Li et al. 2022) region bias from sentence likelihoods
- :mod:`~biasbook.metrics.sparseness`  HERB's building blocks: descriptive vectors, cluster and
  descriptor sparseness, descriptor and pair weights
- :mod:`~biasbook.metrics.cooccurrence_bias`  co-occurrence bias scores (Bordia & Bowman 2019)
- :mod:`~biasbook.metrics.cb`    Categorical Bias score (Ahn & Oh 2021)
"""
