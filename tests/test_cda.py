"""Counterfactual data augmentation (biasbook.mitigation.cda): counts worked out by hand."""

from collections import Counter

import numpy as np
import pytest
import torch

from biasbook.mitigation import cda
from biasbook.models import from_model
from biasbook.testing import tiny_model

CORPUS = [
    "Mexico and Canada signed a treaty.",        # Mexico, Canada
    "Trade with Mexico grew; Mexico exported.",  # Mexico x2 (one text: one substitute)
    "Nothing here mentions a country.",
    "The Mexican border.",                       # adjective: not a mention
    "Canada voted.",                             # Canada
    "Japan, Mexico.",                            # Japan, Mexico
]
TARGETS = ["Mexico", "Canada", "Japan", "Egypt"]


def test_mention_counts_by_hand():
    assert cda.mention_counts(CORPUS, TARGETS) == Counter(
        {"Mexico": 4, "Canada": 2, "Japan": 1, "Egypt": 0})


def test_balance_terms_by_hand():
    # numpy's seed-0 permutation puts the groups in the tie-break order Japan, Mexico, Canada,
    # Egypt. Text 0: Mexico -> Japan (all at 0), Canada -> Mexico (Japan is taken); text 1:
    # Mexico x2 -> Canada (J1 M1 C0 E0); text 4: Canada -> Egypt (J1 M1 C2 E0); text 5:
    # Japan -> Japan (J1 M1 E1 tie), Mexico -> Mexico (M1 < C2, ahead of E1).
    assert np.random.default_rng(0).permutation(TARGETS).tolist() == [
        "Japan", "Mexico", "Canada", "Egypt"]
    out = cda.balance_terms(CORPUS, TARGETS, seed=0)
    assert out.texts == [
        "Japan and Mexico signed a treaty.",
        "Trade with Canada grew; Canada exported.",
        "Nothing here mentions a country.",
        "The Mexican border.",
        "Egypt voted.",
        "Japan, Mexico.",
    ]
    assert out.after == Counter({"Japan": 2, "Mexico": 2, "Canada": 2, "Egypt": 1})
    assert out.before == Counter({"Mexico": 4, "Canada": 2, "Japan": 1, "Egypt": 0})
    assert out.changed == 3 and out.spread == 1


def test_single_mentions_balance_to_within_one():
    texts = [f"He moved to {c}." for c in ["Iraq"] * 7 + ["Cuba"] * 2 + ["India"]]
    out = cda.balance_terms(texts, ["Iraq", "Cuba", "India", "Chile"], seed=3)
    assert sorted(out.after.values()) == [2, 2, 3, 3]  # 10 mentions over 4 groups
    assert out.changed == len(texts) - sum(
        t == o for t, o in zip(texts, out.texts, strict=True))


def test_a_text_never_gets_one_substitute_for_two_groups():
    out = cda.balance_terms(["France and Germany"] * 6, ["France", "Germany", "Spain"], seed=0)
    for text in out.texts:
        first, second = text.split(" and ")
        assert first != second


def test_forms_map_to_their_group_and_the_first_form_is_written():
    terms = {"America": ["America", "United States"], "Korea": ["Korea", "South Korea"]}
    out = cda.balance_terms(["The United States and South Korea met."], terms)
    assert out.before == Counter({"America": 1, "Korea": 1})
    assert out.texts[0] in ("The America and Korea met.", "The Korea and America met.")


@pytest.mark.parametrize("boundary, text, found", [
    ("word", "미국에서 왔다", 0),     # a Korean particle blocks a word match...
    ("prefix", "미국에서 왔다", 1),   # ...but not a prefix match
    ("prefix", "북미국", 0),          # the left boundary still holds
    ("none", "来自美国的人", 1),      # Chinese has no boundaries at all
    ("word", "Iranians", 0),
])
def test_boundaries(boundary, text, found):
    counts = cda.mention_counts([text], ["미국", "美国", "Iran", "Cuba"], boundary=boundary)
    assert sum(counts.values()) == found


def test_ignore_case_counts_lower_case_mentions():
    counts = cda.mention_counts(["CHINA and china"], ["China", "Japan"], ignore_case=True)
    assert counts["China"] == 2


@pytest.mark.parametrize("terms, error", [
    ("Mexico", TypeError),
    (["Mexico"], ValueError),
    ({"A": ["x"], "B": ["x"]}, ValueError),
])
def test_bad_terms_are_rejected(terms, error):
    with pytest.raises(error):
        cda.balance_terms(["x"], terms)


def test_training_examples_fit_continual_training(tok, private_cache):
    from biasbook.training.continual import IGNORE, continual_training

    gpt2 = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    examples = cda.training_examples(gpt2, ["people in paris are kind .", "a cat ."])
    assert examples[1] == ([tok.bos_token_id, *tok.convert_tokens_to_ids(["a", "cat", "."])],) * 2
    bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    masked = cda.training_examples(bert, ["people in paris are kind ."], mlm_probability=1.0)
    inputs, labels = masked[0]
    assert labels[0] == labels[-1] == IGNORE and all(x != IGNORE for x in labels[1:-1])
    run = continual_training(gpt2, examples * 4, epochs=1, lr=1e-2, batch_size=4,
                             evaluate=lambda lm: np.zeros(1), eval_key="none", cache=False,
                             progress=False)
    assert len(run.fingerprints) == 2 and run.fingerprints[1] != run.fingerprints[0]
    torch.testing.assert_close(gpt2.model.transformer.wte.weight,
                               tiny_model("gpt2", len(tok)).transformer.wte.weight)
