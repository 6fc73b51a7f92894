"""Counterfactual Data Substitution: swaps, the her/his rule, per-document coins."""

import numpy as np
import pytest

from biasbook.mitigation.cds import cds, stands_alone, substitute, swap_table

PAIRS = [("he", "she"), ("his", "her"), ("him", "her"), ("his", "hers"), ("man", "woman"),
         ("john", "mary"), ("husband", "wife")]


def test_swaps_both_ways_and_leaves_other_words():
    table = swap_table(PAIRS)
    assert substitute(["john", "met", "a", "woman", "and", "she", "smiled"], table) == \
        ["mary", "met", "a", "man", "and", "he", "smiled"]
    assert substitute(["nothing", "gendered", "here"], table) == ["nothing", "gendered", "here"]


@pytest.mark.parametrize("text, expected", [
    ("i saw her .", "i saw him ."),               # object before punctuation
    ("i saw her", "i saw him"),                   # ... or at the end of the document
    ("i gave her a book", "i gave him a book"),   # before an article
    ("he told her to leave", "she told him to leave"),
    ("her book is red", "his book is red"),       # determiner before a noun
    ("her red book", "his red book"),             # ... before an adjective and a noun
    ("the book is his", "the book is hers"),      # possessive pronoun at the end
    ("the book is his .", "the book is hers ."),
    ("a friend of his from school", "a friend of hers from school"),
    ("his is better", "hers is better"),          # ... before a verb
    ("his book", "her book"),
    ("the choice is hers", "the choice is his"),  # "hers" and "him" are never ambiguous
    ("i told him", "i told her"),
])
def test_her_and_his_by_the_next_token(text, expected):
    assert " ".join(substitute(text.split(), swap_table(PAIRS))) == expected


@pytest.mark.parametrize("text, expected", [
    # issue 28: "own", "other", "same", ... continue the noun phrase of a possessive
    ("she lost her own keys", "he lost his own keys"),
    ("he lost his own keys", "she lost her own keys"),
    ("she did it on her own .", "he did it on his own ."),
    ("her other hand", "his other hand"),
    ("his other hand", "her other hand"),
    ("his most famous film", "her most famous film"),
    ("her same old story", "his same old story"),
    ("her every move", "his every move"),
    # degree words fit both readings: the word after them decides for "her"
    ("her most famous film", "his most famous film"),
    ("her more famous sister", "his more famous sister"),
    ("i love her more .", "i love him more ."),
    ("i love her more than life", "i love him more than life"),
    ("i love her very much", "i love him very much"),
    ("her very first film", "his very first film"),
    ("her only son", "his only son"),
    ("i saw her only once", "i saw him only once"),
    ("what i like about her most", "what i like about him most"),
    ("his only son", "her only son"),
    # adverbs: after an object for "her", premodifiers (or nouns) after "his"
    ("they brought her back", "they brought him back"),
    ("he hurt his back", "she hurt her back"),
    ("i love her so much", "i love him so much"),
    ("his so called friend", "her so called friend"),
    ("her later films", "his later films"),
    ("his then wife", "her then husband"),
    # coordinated possessives share the noun phrase after them
    ("everyone has his or her own view", "everyone has her or his own view"),
    ("his and her towels", "her and his towels"),
    ("his and hers", "hers and his"),
    ("i saw her and her husband", "i saw him and his wife"),
])
def test_possessives_before_own_other_and_degree_words(text, expected):
    assert " ".join(substitute(text.split(), swap_table(PAIRS))) == expected


def test_stands_alone_reads_the_words_after_her_and_his():
    assert stands_alone(["her"], 0) and stands_alone(["his", ","], 0)
    assert not stands_alone(["his", "own"], 0)
    assert stands_alone(["her", "very"], 0)           # nothing after the degree word
    assert not stands_alone(["his", "very", "much"], 0)  # "his" + degree word: a determiner
    with pytest.raises(ValueError, match="not 'her' or 'his'"):
        stands_alone(["him", "."], 0)


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
