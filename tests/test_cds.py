"""Counterfactual Data Substitution: swaps, the her/his rule, per-document coins."""

import numpy as np
import pytest

from biasbook.mitigation.cds import cds, substitute, swap_table

PAIRS = [("he", "she"), ("his", "her"), ("him", "her"), ("his", "hers"), ("man", "woman"),
         ("john", "mary")]


def test_swaps_both_ways_and_leaves_other_words():
    table = swap_table(PAIRS)
    assert substitute(["john", "met", "a", "woman", "and", "she", "smiled"], table) == \
        ["mary", "met", "a", "man", "and", "he", "smiled"]
    assert substitute(["nothing", "gendered", "here"], table) == ["nothing", "gendered", "here"]


@pytest.mark.parametrize("text, expected", [
    ("i saw her .", "i saw him ."),               # object before punctuation
    ("i saw her", "i saw him"),                   # ... or at the end
    ("i gave her a book", "i gave him a book"),   # before a function word
    ("her book is red", "his book is red"),       # determiner before a content word
    ("the book is his", "the book is hers"),      # possessive pronoun
    ("his book", "her book"),
])
def test_her_and_his_by_the_next_token(text, expected):
    assert " ".join(substitute(text.split(), swap_table(PAIRS))) == expected


def test_half_the_documents_swapped_independently_of_position():
    docs = [["he", "ran", str(i)] for i in range(2000)]
    out = list(cds(docs, PAIRS, seed=7))
    swapped = np.array([d[0] == "she" for d in out])
    assert 0.45 < swapped.mean() < 0.55
    assert [d[1:] for d in out] == [d[1:] for d in docs]
    # the coin of the i-th document is drawn from (seed, i) alone
    assert [d[0] == "she" for d in cds(docs[:10], PAIRS, seed=7)] == swapped[:10].tolist()
    again = list(cds(docs, PAIRS, seed=7))
    assert again == out
    assert list(cds(docs, PAIRS, probability=0.0)) == docs
    assert all(d[0] == "she" for d in cds(docs[:50], PAIRS, probability=1.0))


def test_bad_inputs():
    with pytest.raises(ValueError, match="paired with both"):
        swap_table([("king", "queen"), ("king", "empress")])
    with pytest.raises(ValueError, match="pairs"):
        swap_table(["he"])
    with pytest.raises(ValueError, match="probability"):
        list(cds([["he"]], PAIRS, probability=2))
    with pytest.raises(TypeError, match="token lists"):
        list(cds(["he ran"], PAIRS))
