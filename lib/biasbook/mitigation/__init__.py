"""Bias mitigation methods: the gender-subspace embedding regulariser
(:mod:`~biasbook.mitigation.subspace`, Bordia & Bowman 2019), contextual word alignment with
head-only fine-tuning (:mod:`~biasbook.mitigation.alignment`, Ahn & Oh 2021) and counterfactual
data augmentation over many groups (:mod:`~biasbook.mitigation.cda`)."""
