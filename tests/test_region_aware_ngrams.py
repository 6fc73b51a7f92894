"""Unigram/bigram analysis of the region-aware chapter (Tables 10-11 form), on hand-counted toys."""

import pandas as pd
import pytest

from biasbook import datafiles
from biasbook.chapters.region_aware import ngrams

# Hand count (function words of STOP_WORDS dropped, possessive 's dropped, within each text):
#   "Her mother's new dress and new shoes." -> her mother new dress new shoes
#   "The new dress of her sister."          -> new dress her sister
#   "His father's new car."                 -> his father new car
TOY = pd.DataFrame({
    "region": ["X", "X", "X", "Y"],
    "group": ["F", "F", "M", "F"],
    "text": ["Her mother's new dress and new shoes.", "The new dress of her sister.",
             "His father's new car.", "she sang"],
})


def test_hand_counted_unigrams_and_bigrams():
    female = TOY[(TOY.region == "X") & (TOY.group == "F")]["text"]
    assert ngrams.top_ngrams(female, 1, 3) == [("new", 3), ("dress", 2), ("her", 2)]
    # new dress: 2; dress new, dress her, her mother, her sister, mother new, new shoes: 1 each
    assert ngrams.top_ngrams(female, 2, 3) == [("new dress", 2), ("dress her", 1),
                                               ("dress new", 1)]
    assert ngrams.counts(female, 2)["shoes new"] == 0  # no bigram across examples
    assert ngrams.counts(["a b c"], 1) == {}  # single characters and stop words only


def test_group_table_per_region_and_gender():
    table = ngrams.group_ngrams(TOY, k=2)
    assert table[["region", "group", "examples"]].values.tolist() == [
        ["X", "F", 2], ["X", "M", 1], ["Y", "F", 1], ["Y", "M", 0]]
    assert table.iloc[0]["unigrams"] == "new, dress"
    assert table.iloc[1]["bigrams"] == "father new, his father"
    assert table.iloc[3]["unigrams"] == ""


def test_bad_n():
    with pytest.raises(ValueError):
        ngrams.counts(["x"], 3)


def test_paper_tables_transcribed():
    frame = ngrams.paper_tables(datafiles.paper_results("region-aware"))
    assert frame["table"].value_counts().to_dict() == {"table11_ngrams": 15, "table10_ngrams": 6}
    assert (frame["bigrams"].str.split(", ").str.len() == 10).all()
    assert set(frame["gender"]) == {"F", "M"}
    first = frame.iloc[0]
    assert (first["topic"], first["region"], first["gender"]) == (
        "Fashion and lifestyle", "Africa", "M")
    assert first["unigrams"].endswith("cher, people")


def test_word_cluster_points_on_toy_vectors():
    from types import SimpleNamespace

    import numpy as np

    from biasbook.chapters.region_aware import wordclusters

    table = pd.DataFrame({"topic": [0, 1], "name": ["a", "b"], "gender": ["F", "M"],
                          "words": [["x1", "x2"], ["y1", "y2", "y3"]]})
    vec = {"x1": [1, 0, 0], "x2": [1.1, 0, 0], "y1": [0, 5, 0],
           "y2": [0, 5.2, 0], "y3": [0, 4.9, 0]}
    frame = wordclusters.points(SimpleNamespace(table=table), top_words=2,
                                embed=lambda ws: np.array([vec[w] for w in ws]))
    assert frame["word"].tolist() == ["x1", "x2", "y1", "y2"]
    # The first component separates the two topics.
    first = frame.groupby("topic")["x"].mean()
    assert abs(first[0] - first[1]) > 3 * frame.groupby("topic")["x"].std().max()
