"""Transitional: the names that code outside the chapter still imports from here.

This module used to hold the chapter's regions, template scores, bias summaries, comparisons
with the paper and representations. Each now lives in the module named for what it computes
(see the package docstring); the chapter's own code, notebooks and tests import from there.
Kept only until the remaining importers (``biasbook.chapters.trust.agreement``,
``tests/test_plan.py``, ``tests/test_pll.py``, ``tests/test_scoring_memory.py``,
``tests/test_downstream.py``) import from the new homes; then delete it.
"""

from biasbook.chapters.herb.regions import herb_regions
from biasbook.chapters.herb.sentence_scores import descriptor_scores, fill_template
from biasbook.chapters.herb.tables import bias_summary

__all__ = ["bias_summary", "descriptor_scores", "fill_template", "herb_regions"]
