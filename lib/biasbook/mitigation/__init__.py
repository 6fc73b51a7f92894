"""Bias mitigation methods: the gender-subspace embedding regulariser
(:mod:`~biasbook.mitigation.subspace`, Bordia & Bowman 2019)."""
