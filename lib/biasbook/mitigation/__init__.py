"""Bias mitigation methods: the gender-subspace embedding regulariser
(:mod:`~biasbook.mitigation.subspace`, Bordia & Bowman 2019), contextual word alignment with
head-only fine-tuning (:mod:`~biasbook.mitigation.alignment`, Ahn & Oh 2021) and counterfactual
data augmentation over many groups (:mod:`~biasbook.mitigation.cda`), co-occurrence
neutralisation before GloVe (:mod:`~biasbook.mitigation.birm`, indirect stereotypes 2023) and
counterfactual data substitution (:mod:`~biasbook.mitigation.cds`, Maudslay et al. 2019)."""
