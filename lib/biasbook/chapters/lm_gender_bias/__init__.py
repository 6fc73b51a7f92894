"""Bordia & Bowman (2019): gender bias in word-level language models.

- :mod:`.data`   defining pairs (Appendix A) and the paper's numbers
"""
