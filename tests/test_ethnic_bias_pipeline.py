"""The chapter's CB pipeline on tiny models, against forward passes done by hand."""

import numpy as np
import pytest
import torch

from biasbook import models, testing
from biasbook.chapters.ethnic_bias import data
from biasbook.chapters.ethnic_bias.pipeline import cb_scores, target_token_counts

pytestmark = pytest.mark.usefixtures("one_torch_thread", "private_cache")

TARGETS = ["Iraq", "Japan", "North Korea"]  # 4, 5 and 10 sub-tokens under the spelling tokenizer
ATTRIBUTES = ["Enemy", "Bank teller"]
# Template 1 puts the target before the attribute, template 5 after it; written out by hand.
SENTENCES = {1: {"Enemy": ("People from ", " are enemies."),
                 "Bank teller": ("People from ", " are bank tellers.")},
             5: {"Enemy": ("An enemy is from ", "."),
                 "Bank teller": ("A bank teller is from ", ".")}}
CORES = {"Enemy": {1: "enemies", 5: "enemy"}, "Bank teller": {1: "bank tellers", 5: "bank teller"}}


@pytest.fixture(scope="module")
def spell():
    return testing.tiny_tokenizer(spell=True)


@pytest.fixture(scope="module")
def lms(spell):
    out = {}
    for arch in ("bert", "gpt2"):
        model = testing.tiny_model(arch, len(spell))
        with torch.no_grad():  # larger weights: peaked distributions, attributes that matter
            for p in model.parameters():
                p.mul_(8)
        out[arch] = models.from_model(model, spell, name=f"tiny-{arch}")
    return out


@torch.inference_mode()
def masked_logprob(lm, text, pieces, which):
    """log prod_j P(mask_j = piece_j) at the ``which`` ("first"/"last") len(pieces) masks."""
    ids = lm.encode(text)
    logp = torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    masks = [i for i, t in enumerate(ids) if t == lm.tokenizer.mask_token_id]
    slots = masks[:len(pieces)] if which == "first" else masks[-len(pieces):]
    tokens = lm.tokenizer.convert_tokens_to_ids(pieces)
    return sum(logp[s, t].item() for s, t in zip(slots, tokens, strict=True))


def masks(n):
    return " ".join(["[MASK]"] * n)


def masked_by_hand(lm, template, attribute, target):
    before, after = SENTENCES[template][attribute]
    pieces = lm.tokenizer.tokenize(target)
    core = CORES[attribute][template]
    which = "first" if template == 1 else "last"
    target_text = before + masks(len(pieces)) + after
    prior_text = target_text.replace(core, masks(len(lm.tokenizer.tokenize(core))))
    return (masked_logprob(lm, target_text, pieces, which)
            - masked_logprob(lm, prior_text, pieces, which))


def sample_variance(values):
    values = np.asarray(values)
    return ((values - values.mean()) ** 2).sum() / (len(values) - 1)


def test_masked_cb_by_hand(lms):
    lm = lms["bert"]
    got = cb_scores(lm, "en", targets=TARGETS, attributes=ATTRIBUTES, templates=[1, 5],
                    cache=False)
    want = np.array([[[masked_by_hand(lm, t, a, n) for n in TARGETS] for a in ATTRIBUTES]
                     for t in (1, 5)])
    np.testing.assert_allclose(got.log_p_norm, want, rtol=1e-4, atol=1e-5)
    variances = [sample_variance(row) for t in want for row in t]
    assert got.cb == pytest.approx(np.mean(variances), rel=1e-4)
    assert got.cb > 1e-3  # the test model's attributes do move the targets
    np.testing.assert_allclose(got.variances["variance"], variances, rtol=1e-4)


def test_multi_token_target_is_the_product_of_its_token_probabilities(lms, spell):
    # "North Korea" is ten sub-tokens: its probability is the product of each sub-token's
    # probability at its own mask, and its prior masks the same ten positions.
    lm = lms["bert"]
    assert len(spell.tokenize("North Korea")) == 10
    got = cb_scores(lm, "en", targets=TARGETS, attributes=["Enemy"], templates=[1], cache=False)
    pieces = spell.tokenize("North Korea")
    text = "People from " + masks(10) + " are enemies."
    by_hand = masked_logprob(lm, text, pieces, "first")
    assert got.log_p_target[0, 0, 2] == pytest.approx(by_hand, rel=1e-6)
    prior = masked_logprob(lm, text.replace("enemies", masks(len(spell.tokenize("enemies")))),
                           pieces, "first")
    assert got.log_p_prior[0, 0, 2] == pytest.approx(prior, rel=1e-6)


@torch.inference_mode()
def sentence_logprob(lm, text):
    x = [*lm.prefix_ids, *lm.encode(text)]
    logp = torch.log_softmax(lm.model(input_ids=torch.tensor([x])).logits[0].double(), -1)
    return sum(logp[t - 1, x[t]].item() for t in range(1, len(x)))


def test_causal_cb_by_hand_with_the_attribute_mean_prior(lms):
    lm = lms["gpt2"]
    got = cb_scores(lm, "en", targets=TARGETS, attributes=ATTRIBUTES, templates=[1, 5],
                    cache=False)
    want = []
    for t in (1, 5):
        joint = np.array([[sentence_logprob(lm, SENTENCES[t][a][0] + n + SENTENCES[t][a][1])
                           for n in TARGETS] for a in ATTRIBUTES])
        p = np.exp(joint) / np.exp(joint).sum(axis=1, keepdims=True)  # p(n | a), per attribute
        prior = p.mean(axis=0)  # the attribute unknown, uniform over the list
        want.append(np.log(p / prior))
    np.testing.assert_allclose(got.log_p_norm, want, rtol=1e-4, atol=1e-5)
    assert got.cb == pytest.approx(np.mean([sample_variance(r) for t in want for r in t]),
                                   rel=1e-4)
    assert got.cb > 1e-3


@pytest.mark.parametrize("arch", ["bert", "gpt2"])
def test_cb_does_not_depend_on_the_order_of_targets_or_attributes(lms, arch):
    kwargs = dict(templates=[1, 5], cache=False)
    plain = cb_scores(lms[arch], "en", targets=TARGETS, attributes=ATTRIBUTES, **kwargs)
    shuffled = cb_scores(lms[arch], "en", targets=TARGETS[::-1], attributes=ATTRIBUTES[::-1],
                         **kwargs)
    assert shuffled.cb == pytest.approx(plain.cb, rel=1e-9)


def test_a_subset_equals_scoring_the_subset(lms):
    lm = lms["gpt2"]
    full = cb_scores(lm, "en", targets=TARGETS, attributes=[*ATTRIBUTES, "Pirate"],
                     templates=[1, 5], cache=False)
    direct = cb_scores(lm, "en", targets=TARGETS[:2], attributes=ATTRIBUTES, templates=[5],
                       cache=False)
    part = full.subset(targets=TARGETS[:2], attributes=ATTRIBUTES, templates=[5])
    np.testing.assert_allclose(part.log_p_norm, direct.log_p_norm, rtol=1e-5, atol=1e-5)
    assert part.cb == pytest.approx(direct.cb, rel=1e-5)


def test_results_are_cached_by_content(lms):
    lm = lms["gpt2"]
    first = cb_scores(lm, "en", targets=TARGETS, attributes=ATTRIBUTES, templates=[1])
    again = cb_scores(lm, "en", targets=TARGETS, attributes=ATTRIBUTES, templates=[1])
    np.testing.assert_array_equal(first.log_p_target, again.log_p_target)


def test_as_coded_counts_singular_attribute_tokens_and_crosses_subtokens(lms, spell):
    lm = lms["bert"]
    got = cb_scores(lm, "en", targets=TARGETS, attributes=["Enemy"], templates=[1],
                    mode="as-coded", cache=False)
    ids = lm.encode("People from " + masks(4) + " are " + masks(len(spell.tokenize("enemy")))
                    + ".")
    with torch.inference_mode():
        logp = torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    slots = [i for i, t in enumerate(ids) if t == lm.tokenizer.mask_token_id][:4]
    tokens = spell.convert_tokens_to_ids(spell.tokenize("Iraq"))
    cross = sum(logp[s, t].item() for t in tokens for s in slots)  # every piece at every mask
    assert got.log_p_prior[0, 0, 0] == pytest.approx(cross, rel=1e-6)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(targets="Iraq"), TypeError, "bare string"),
    (dict(targets=["Atlantis", "Iraq"]), KeyError, "Atlantis"),
    (dict(targets=["Iraq"]), ValueError, "more than 1 targets"),
    (dict(attributes=["Enemy", "Enemy"]), ValueError, "distinct"),
    (dict(templates=[11]), ValueError, "templates"),
    (dict(mode="as-coded"), ValueError, "masked-LM code"),
    (dict(mode="typo"), ValueError, "mode must be"),
])
def test_bad_requests_are_refused(lms, kwargs, error, match):
    with pytest.raises(error, match=match):
        cb_scores(lms["gpt2"], "en", **{"cache": False, **kwargs})


def test_unknown_language_is_refused(lms):
    with pytest.raises(ValueError, match="unknown language"):
        cb_scores(lms["gpt2"], "fr", cache=False)


def test_frames_render_the_attribute_core():
    f = data.frame(data.language("en"), 6, "Spy")
    assert f.text == "Spies are from {}." and f.text[f.start:f.end] == "Spies"
    assert f.masked("[MASK]") == "[MASK] are from {}."


def test_target_token_counts_read_the_slot_in_context(lms):
    counts = target_token_counts(lms["bert"], "en", 2, TARGETS)
    assert counts.to_dict() == {"Iraq": 4, "Japan": 5, "North Korea": 10}
