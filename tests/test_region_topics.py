"""Region-aware topics (Borah et al. 2024, Secs. 4.1-4.2): the F/M alignment rules, the topic
alignment probabilities, u_mass coherence, the topic-pair condition, and same seed, same tables."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from biasbook.chapters.region_aware import gendered, pairing, topic_measures, topics

# --------------------------------------------------------------------------- F/M-aligned data


def test_gender_terms_are_the_52_pairs_of_appendix_g():
    terms = gendered.gender_terms()
    assert len(terms["F"]) == len(terms["M"]) == 52
    pairs = list(zip(terms["M"], terms["F"], strict=True))
    assert pairs[0] == ("monastery", "convent") and pairs[-1] == ("twin brother", "twin sister")
    assert ("wives", "husbands") in pairs  # as printed, male first
    fixed = list(zip(*gendered.gender_terms(corrected=True).values(), strict=True))
    assert ("wives", "husbands") in fixed and ("ex girlfriend", "ex boyfriend") in fixed


@pytest.mark.parametrize("text, expected", [
    ("There is the theme of this thesis.", (0, 0)),         # her/he/his inside other words
    ("Women and men.", (1, 1)),                             # men is not found inside women
    ("His twin-brother met her mother-in-law.", (2, 2)),    # phrase once, not also 'brother'
    ("HE said SHE said", (1, 1)),                           # case-insensitive by default
    ("The Catholic priest and the nun", (1, 1)),
    ("her hers herself", (2, 0)),                           # 'hers' is not a listed term
])
def test_term_counts_by_hand(text, expected):
    assert gendered.TermMatcher(gendered.gender_terms()).counts(text) == expected


def test_case_sensitive_matching_uses_the_cased_list():
    matcher = gendered.TermMatcher(gendered.gender_terms(), case_sensitive=True)
    assert matcher.counts("She and He") == (1, 1)  # both cased forms are listed
    assert matcher.counts("SHE") == (0, 0)


@pytest.mark.parametrize("counts, exclusive, majority", [
    ((1, 0), "F", "F"), ((0, 3), "M", "M"), ((2, 1), "", "F"), ((1, 2), "", "M"),
    ((2, 2), "", ""), ((0, 0), "", ""),
])
def test_alignment_rules_by_hand(counts, exclusive, majority):
    assert gendered.align(*counts, "exclusive") == exclusive
    assert gendered.align(*counts, "majority") == majority


def test_table6_counts_by_hand():
    docs = {"A": ["She is here.", "He is here.", "His dad and her mom.", "Nobody.",
                  "Her sister and her aunt, and his son."],
            "B": ["The king.", "The queens."]}
    labelled = gendered.label_documents(docs)
    assert gendered.counts(labelled).to_dict("records") == [
        {"region": "A", "total": 2, "female": 1, "male": 1, "both": 2},
        {"region": "B", "total": 2, "female": 1, "male": 1, "both": 0}]
    majority = gendered.label_documents(docs, rule="majority")
    # "His dad and her mom": 2 M (his, dad) vs 2 F (her, mom), a tie; the last one 4 F vs 2 M
    assert majority.loc[majority["region"] == "A", "group"].tolist() == ["F", "M", "", "F"]


def test_aligned_sample_is_a_seeded_subset_in_order():
    docs = {"A": [f"she said {i}" for i in range(50)] + [f"he said {i}" for i in range(50)]}
    labelled = gendered.label_documents(docs)
    a = gendered.aligned(labelled, max_docs=20, seed=3)
    assert len(a) == 20 and a.equals(gendered.aligned(labelled, max_docs=20, seed=3))
    assert a["text"].tolist() == [t for t in docs["A"] if t in set(a["text"])]  # original order
    assert len(gendered.aligned(labelled, max_docs=None)) == 100


def test_bad_input_is_refused():
    with pytest.raises(TypeError, match="bare string"):
        gendered.label_documents({"A": "she said"})
    with pytest.raises(ValueError, match="rule"):
        gendered.label_documents({"A": ["she"]}, rule="any")


# --------------------------------------------------------------------------- topic alignment


def test_alignment_probabilities_by_hand():
    #            topic:  0    0    0    0    1    1    2    -1
    table = topic_measures.alignment(
        [0, 0, 0, 0, 1, 1, 2, -1], [0.8, 0.6, 0.3, 0.5, 0.7, 0.7, 0.2, 0.9],
        ["F", "F", "M", "M", "F", "M", "M", "F"]).set_index("topic")
    # topic 0: p_F = (0.8 + 0.6) / 2 = 0.7 > p_M = (0.3 + 0.5) / 2 = 0.4 -> F
    assert table.loc[0, "p_female"] == pytest.approx(0.7)
    assert table.loc[0, "p_male"] == pytest.approx(0.4)
    assert table.loc[0, "gender_by_probability"] == "F"
    # topic 1: 0.7 against 0.7 -> a tie belongs to neither
    assert table.loc[1, "gender_by_probability"] == ""
    # topic 2: no F example -> p_F = 0 -> M; the outlier (-1) is no topic
    assert (table.loc[2, "p_female"], table.loc[2, "gender_by_probability"]) == (0.0, "M")
    assert list(table.index) == [0, 1, 2]
    # share rule: region F share 4/8 = 0.5; topic 0 has 2/4 = 0.5 -> tie; topic 1 1/2 -> tie
    assert table["gender_by_share"].tolist() == ["", "", "M"]


def test_assigned_probability_reads_both_of_bertopics_shapes():
    # several topics: a matrix, read at each example's topic; one topic: a vector
    matrix = [[0.2, 0.7, 0.1], [0.3, 0.3, 0.4], [0.5, 0.1, 0.4]]
    picked = topic_measures.assigned_probability
    assert picked([1, 2, -1], matrix).tolist() == [0.7, 0.4, 0.0]
    assert picked([0, 0, -1], [0.8, 0.6, 0.1]).tolist() == [0.8, 0.6, 0.0]
    assert picked([-1, -1], None).tolist() == [0.0, 0.0]  # no topic at all
    with pytest.raises(ValueError, match="probabilities for"):
        picked([0, 0, 0], [0.5, 0.5])
    with pytest.raises(ValueError, match="probability matrix"):
        picked([0, 3], [[0.1, 0.2], [0.3, 0.4]])


def test_alignment_refuses_unknown_groups():
    with pytest.raises(ValueError, match="'F' or 'M'"):
        topic_measures.alignment([0], [0.5], ["X"])


# --------------------------------------------------------------------------- u_mass


def _umass_by_hand(words, docs):
    """Mimno et al.'s u_mass with gensim's epsilon and mean: every word against each word
    ranked above it, log((D(w_i, w_j) + eps) / D(w_j)), D counted over documents."""
    sets = [set(d) for d in docs]
    n = len(docs)

    def df(*ws):
        return sum(all(w in s for w in ws) for s in sets)

    scores = [math.log((df(words[i], words[j]) / n + 1e-12) / (df(words[j]) / n))
              for i in range(1, len(words)) for j in range(i)]
    return sum(scores) / len(scores)


def test_umass_matches_the_formula_on_a_toy_corpus():
    docs = [["cat", "dog", "pet"], ["cat", "pet"], ["dog", "bone"], ["cat", "dog"],
            ["fish", "pet", "water"], ["water", "boat"], ["boat", "sail", "water"], ["cat"]]
    topic_words = [["cat", "dog", "pet"], ["water", "boat", "sail", "fish"], ["bone", "sail"]]
    got = topic_measures.umass(topic_words, docs)
    expected = [_umass_by_hand(w, docs) for w in topic_words]
    assert got == pytest.approx(expected, rel=1e-9)
    # hand value of the first topic: pairs (dog|cat) 2/4, (pet|cat) 2/4, (pet|dog) 1/3
    assert got[0] == pytest.approx((2 * math.log(2 / 4) + math.log(1 / 3)) / 3)
    assert got[2] < got[0]  # never co-occurring words are the least coherent


def test_umass_and_mimnos_plus_one_form_rank_equal_length_topics_oppositely():
    """The counterexample to "the +1 form ranks topics of equal length the same": two-word
    topics, so one pair each, and every document frequency counted by hand (n = 12 documents).
    """
    docs = ([["alpha", "beta"], ["alpha"]]                      # D(alpha) = 2, D(alpha, beta) = 1
            + [["gamma", "delta"]] * 6 + [["gamma"]] * 4)       # D(gamma) = 10, D(gamma, delta) = 6
    rare, frequent = ["alpha", "beta"], ["gamma", "delta"]
    gensim_form = topic_measures.umass([rare, frequent], docs)
    # gensim: log((D(w2, w1) / n + 1e-12) / (D(w1) / n))
    assert gensim_form[0] == pytest.approx(math.log(1 / 2))     # -0.693
    assert gensim_form[1] == pytest.approx(math.log(6 / 10))    # -0.511: the frequent pair leads
    # Mimno et al.: log((D(w2, w1) + 1) / D(w1))
    mimno = [math.log((1 + 1) / 2), math.log((6 + 1) / 10)]     # 0 and -0.357: the rare one leads
    assert gensim_form[1] > gensim_form[0] and mimno[0] > mimno[1]


def test_umass_refuses_words_absent_from_the_corpus():
    with pytest.raises(ValueError, match="absent"):
        topic_measures.umass([["cat", "unicorn"]], [["cat", "dog"]])


# --------------------------------------------------------------------------- topic pairs


def _unit(deg):
    return np.array([math.cos(math.radians(deg)), math.sin(math.radians(deg))])


def test_pair_distances_by_hand():
    she, he = _unit(0), _unit(90)
    female = np.stack([_unit(30), 2 * _unit(60)])  # the length does not matter
    male = np.stack([_unit(60), _unit(10)])
    d_same, d_cross = pairing.pair_distances(female, male, she=she, he=he)
    cos = lambda a, b: math.cos(math.radians(a - b))  # noqa: E731
    for (i, f), (j, m) in itertools.product(enumerate([30, 60]), enumerate([60, 10])):
        assert d_same[i, j] == pytest.approx(abs(cos(f, 0) - cos(m, 90)))
        assert d_cross[i, j] == pytest.approx(abs(cos(f, 90) - cos(m, 0)))
    # F at 30 deg and M at 60 deg are mirror images about the she-he bisector: a perfect pair
    assert d_same[0, 0] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="zero vector"):
        pairing.pair_distances(np.zeros((1, 2)), male, she=she, he=he)


def _tables():
    female = pd.DataFrame({"topic": [0, 1], "name": ["F0", "F1"], "words": [["a"], ["b"]],
                           "coherence": [-1.0, -2.0]})
    male = pd.DataFrame({"topic": [5, 6], "name": ["M5", "M6"], "words": [["c"], ["d"]],
                         "coherence": [-3.0, -0.5]})
    return female, male


def test_select_pairs_applies_the_threshold_and_ranks_by_coherence():
    she, he = _unit(0), _unit(90)
    female, male = _tables()
    # F0 at 30 deg, F1 at 45 deg; M5 at 60 deg (mirror of F0), M6 at 47 deg
    f_vec, m_vec = np.stack([_unit(30), _unit(45)]), np.stack([_unit(60), _unit(47)])
    d_same, d_cross = pairing.pair_distances(f_vec, m_vec, she=she, he=he)
    pairs = pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, region="R",
                                n_pairs=5, threshold=0.01)
    passing = {(f, m) for f, m in itertools.product(range(2), range(2))
               if min(d_same[f, m], d_cross[f, m]) < 0.01}
    assert {(int(f), int(m) - 5) for f, m in zip(pairs["female_id"], pairs["male_id"],
                                                  strict=True)} == passing
    assert (0, 0) in passing and (0, 1) not in passing  # cos 30 - cos 43 = 0.135
    # ranked by the mean coherence of the two topics
    assert list(pairs["coherence"]) == sorted(pairs["coherence"], reverse=True)
    assert list(pairs.columns) == pairing.PAIR_COLUMNS and (pairs["region"] == "R").all()


def _vec(cos_she, cos_he):
    """A unit vector with these cosines to she = e1 and he = e2 (the rest in e3)."""
    return np.array([cos_she, cos_he, math.sqrt(1 - cos_she ** 2 - cos_he ** 2)])


def test_select_pairs_or_and_conditions_and_nearest_fill():
    she, he = np.eye(3)[0], np.eye(3)[1]
    female, male = _tables()   # coherence F0 -1, F1 -2, M5 -3, M6 -0.5
    f_vec = np.stack([_vec(0.6, 0.3), _vec(0.2, 0.5)])
    m_vec = np.stack([_vec(0.5, 0.6), _vec(0.5, 0.205)])
    # |cos(F, she) - cos(M, he)| and |cos(F, he) - cos(M, she)|:
    # F0-M5: 0, 0.2   F0-M6: 0.395, 0.2   F1-M5: 0.4, 0   F1-M6: 0.005, 0
    either = pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, n_pairs=5)
    assert list(zip(either["female_topic"], either["male_topic"], strict=True)) == [
        ("F1", "M6"), ("F0", "M5"), ("F1", "M5")]          # mean coherence -1.25, -2, -2.5
    assert either["distance"].tolist() == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    both = pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, n_pairs=5,
                               condition="and")
    assert list(zip(both["female_topic"], both["male_topic"], strict=True)) == [("F1", "M6")]
    assert both["distance"].tolist() == pytest.approx([0.005])
    assert pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, n_pairs=1
                               )["female_topic"].tolist() == ["F1"]
    assert pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, condition="and",
                               threshold=0.004).empty
    nearest = pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, condition="and",
                                  threshold=0.004, n_pairs=2, nearest=True)
    assert nearest["distance"].tolist() == pytest.approx([0.005, 0.2])
    assert not nearest["passes"].any() and nearest["rank"].tolist() == [1, 2]
    with pytest.raises(ValueError, match="condition"):
        pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, condition="xor")


def test_filled_pairs_are_marked_after_the_passing_ones():
    she, he = np.eye(3)[0], np.eye(3)[1]
    female, male = _tables()
    f_vec = np.stack([_vec(0.6, 0.3), _vec(0.2, 0.5)])
    m_vec = np.stack([_vec(0.5, 0.6), _vec(0.5, 0.205)])
    # under "and" the distance is the larger difference: F1-M6 0.005 passes 0.01; the failing
    # pairs by distance: F0-M5 0.2, F0-M6 0.395, F1-M5 0.4
    table = pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, condition="and",
                                n_pairs=3, nearest=True)
    assert table[["female_topic", "male_topic", "pairs"]].values.tolist() == [
        ["F1", "M6", "passing"], ["F0", "M5", "filled"], ["F0", "M6", "filled"]]
    assert table["passes"].tolist() == [True, False, False]
    assert table["distance"].tolist() == pytest.approx([0.005, 0.2, 0.395])
    unfilled = pairing.select_pairs(female, male, f_vec, m_vec, she=she, he=he, condition="and",
                                   n_pairs=3)
    assert unfilled["pairs"].tolist() == ["passing"]  # without nearest nothing is filled
    assert set(pairing.PAIR_MARKS) == {"passing", "filled"}


def test_candidates_are_passing_filled_or_failing_by_hand():
    she, he = np.eye(3)[0], np.eye(3)[1]
    female, male = _tables()
    f_vec = np.stack([_vec(0.6, 0.3), _vec(0.2, 0.5)])
    m_vec = np.stack([_vec(0.5, 0.6), _vec(0.5, 0.205)])
    options = {"she": she, "he": he, "region": "R", "condition": "and", "nearest": True}
    every = pairing.select_pairs(female, male, f_vec, m_vec, n_pairs=4, **options)
    top = pairing.select_pairs(female, male, f_vec, m_vec, n_pairs=2, **options)
    marked = pairing.mark_filled(every, top)
    # F1-M6 passes (0.005); two places: the nearest failing pair F0-M5 (0.2) fills the second
    assert marked[["female_topic", "male_topic", "pairs"]].values.tolist() == [
        ["F1", "M6", "passing"], ["F0", "M5", "filled"], ["F0", "M6", "failing"],
        ["F1", "M5", "failing"]]
    # the same pairs in another region are not filled there
    other = pairing.mark_filled(every.assign(region="S"), top)
    assert other["pairs"].tolist() == ["passing", "failing", "failing", "failing"]


def test_settings_refuse_unknown_keys_and_scale_the_topic_size():
    with pytest.raises(ValueError, match="unknown topic setting"):
        topics.TopicSettings.from_mapping({"min_topic": 3})
    s = topics.TopicSettings(min_topic_fraction=0.01, min_topic_floor=10)
    assert (s.topic_size(500), s.topic_size(4000)) == (10, 40)
    assert topics.TopicSettings(min_topic_size=7).topic_size(4000) == 7


# --------------------------------------------------------------------------- same seed, same tables


@pytest.mark.slow
def test_same_seed_same_tables(one_torch_thread):
    """The smoke pipeline twice without any cache (embeddings, UMAP, HDBSCAN, LLM labels all
    recomputed): identical topics, alignments, labels and pairs."""
    settings = topics.TopicSettings(domain="tweets", regions=("Africa", "Europe"),
                                    docs_per_region=250, label_top=1, label_tokens=8)
    labelled = topics.labelled_documents(settings)
    runs = [topics.region_topics(settings, labelled=labelled, progress=False, cache=False)
            for _ in range(2)]
    for region in runs[0]:
        first, second = runs[0][region], runs[1][region]
        pd.testing.assert_frame_equal(first.table, second.table)
        pd.testing.assert_frame_equal(first.documents, second.documents)
        assert (first.table["gender"] != "").any()
    assert (runs[0]["Africa"].table["llm_label"] != "").any()
    pd.testing.assert_frame_equal(pairing.topic_pairs(runs[0], nearest=True),
                                  pairing.topic_pairs(runs[1], nearest=True))


@pytest.mark.bad_input("A region with only a handful of documents for BERTopic",
                       "a ValueError naming the region and its number of examples, instead of "
                       "a scipy/HDBSCAN message that names none")
def test_too_few_examples_for_bertopic_name_the_region():
    settings = topics.TopicSettings.from_mapping({"domain": "un-debates", "label_model": None})
    texts = ["She spoke about schools.", "He spoke about war.", "She praised nurses.",
             "He praised soldiers.", "She asked for peace."]
    with pytest.raises(ValueError, match="BERTopic could not cluster Oceania's 5 examples"):
        topics.fit_region("Oceania", texts, ["F", "M", "F", "M", "F"], settings, cache=False)
