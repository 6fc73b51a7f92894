"""Slot probabilities, computed by hand from plain forward passes."""

import numpy as np
import pytest
import torch

from biasbook import models, testing
from biasbook.scoring import slot_probabilities

pytestmark = pytest.mark.usefixtures("one_torch_thread", "private_cache")

CANDIDATES = ["paris", "unbelievable", "smartly", "london", "kinds"]  # 1, 3, 2, 1, 2 sub-tokens


@pytest.fixture(scope="module")
def lms(tok):
    return {arch: models.from_model(testing.tiny_model(arch, len(tok)), tok, name=f"tiny-{arch}")
            for arch in ("bert", "roberta", "gpt2", "gemma3", "bart")}


@torch.inference_mode()
def mask_logprobs(lm, text):
    """Full log-softmax at every position of a plainly encoded text."""
    return torch.log_softmax(lm.model(input_ids=torch.tensor([lm.encode(text)])).logits[0].double(),
                             dim=-1)


def by_hand(lm, template, candidate, as_coded=False):
    """Mask the slot with one [MASK] per sub-token and read the sub-tokens' probabilities."""
    mask, pieces = lm.tokenizer.mask_token_id, lm.tokenizer.tokenize(candidate)
    before, after = template.split("{}")
    text = before + " ".join([lm.tokenizer.mask_token] * len(pieces)) + after
    masks_before = lm.encode(before).count(mask)  # a masked attribute earlier in the template
    slots = [t for t, i in enumerate(lm.encode(text)) if i == mask][masks_before:][:len(pieces)]
    logp = mask_logprobs(lm, text)
    tokens = lm.tokenizer.convert_tokens_to_ids(pieces)
    if as_coded:  # every sub-token's probability at every mask position
        return float(np.exp(sum(logp[m, t].item() for t in tokens for m in slots)))
    return float(np.prod([logp[m, t].exp().item() for m, t in zip(slots, tokens, strict=True)]))


@pytest.mark.parametrize("arch", ["bert", "roberta"])
@pytest.mark.parametrize("mode", ["paper", "as-coded"])
@pytest.mark.parametrize("template", ["people in {} are kind .", "{} is very good",
                                      "the [MASK] in {} are kind .", "{} is [MASK] ."])
def test_whole_word_masking_multiplies_position_aligned_subtoken_probabilities(lms, template,
                                                                               mode, arch):
    got = slot_probabilities(lms[arch], template, CANDIDATES, mode=mode, cache=False)
    want = [by_hand(lms[arch], template, c, as_coded=mode == "as-coded") for c in CANDIDATES]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_candidates_with_the_same_subtoken_count_share_one_forward_row(lms):
    lm = lms["bert"]
    rows = []
    hook = lm.model.register_forward_pre_hook(lambda m, args, kwargs: rows.append(
        kwargs["input_ids"].shape[0]), with_kwargs=True)
    try:
        slot_probabilities(lm, "people in {} are kind .", CANDIDATES, cache=False)
    finally:
        hook.remove()
    assert sum(rows) == 3  # lengths 1, 2 and 3


def test_several_templates_at_once_equal_one_at_a_time(lms):
    templates = ["people in {} are kind .", "{} is [MASK] ."]
    together = slot_probabilities(lms["bert"], templates, CANDIDATES, log=True, cache=False)
    assert together.shape == (2, len(CANDIDATES))
    for row, template in zip(together, templates, strict=True):
        np.testing.assert_allclose(row, slot_probabilities(lms["bert"], template, CANDIDATES,
                                                           log=True, cache=False), atol=1e-9)


@torch.inference_mode()
def sentence_logprob(lm, text, skip=0):
    """Plain causal log P(text) from BOS; ``skip`` leading tokens are context, not scored."""
    x = [*lm.prefix_ids, *lm.encode(text)]
    logp = torch.log_softmax(lm.model(input_ids=torch.tensor([x])).logits[0].double(), dim=-1)
    return sum(logp[t - 1, x[t]].item() for t in range(1 + skip, len(x)))


@pytest.mark.parametrize("arch", ["gpt2", "gemma3"])
def test_causal_slots_are_the_candidate_normalised_sentence_probability(lms, arch):
    lm, template = lms[arch], "people in {} are very kind ."
    joint = np.array([sentence_logprob(lm, template.format(c)) for c in CANDIDATES])
    got = slot_probabilities(lm, template, CANDIDATES, cache=False)
    np.testing.assert_allclose(got, np.exp(joint) / np.exp(joint).sum(), rtol=1e-5)


def test_causal_slots_are_the_conditional_given_the_rest_up_to_a_cancelling_constant(lms):
    lm, prefix = lms["gpt2"], "people in"
    n_prefix = len(lm.encode(prefix))
    tgt, prior = "people in {} are very kind .", "people in {} are ."
    log_tgt = slot_probabilities(lm, tgt, CANDIDATES, log=True, cache=False)
    log_prior = slot_probabilities(lm, prior, CANDIDATES, log=True, cache=False)
    # log P(candidate, rest | prefix) by hand, with the prefix as unscored context
    cond_tgt = np.array([sentence_logprob(lm, tgt.format(c), n_prefix) for c in CANDIDATES])
    cond_prior = np.array([sentence_logprob(lm, prior.format(c), n_prefix) for c in CANDIDATES])
    # they differ by a constant per template: log P(prefix) - log sum_c P(S_c) ...
    for mine, conditional in ((log_tgt, cond_tgt), (log_prior, cond_prior)):
        offset = mine - conditional
        np.testing.assert_allclose(offset, offset[0], atol=1e-5)
    # ... which cancels in the CB score, the variance of the log normalised probability
    assert np.var(log_tgt - log_prior) == pytest.approx(np.var(cond_tgt - cond_prior), rel=1e-4)


@pytest.mark.parametrize("budget", [5, 10_000])
def test_bart_slots_are_the_decoder_likelihood_given_the_masked_template(lms, budget):
    lm, template = lms["bart"], "people in {} are kind ."
    encoder = torch.tensor([lm.encode(template.format(lm.tokenizer.mask_token))])
    joint = []
    with torch.inference_mode():
        for c in CANDIDATES:
            ids = lm.encode(template.format(c))
            decoder = torch.tensor([[lm.model.config.decoder_start_token_id, *ids[:-1]]])
            logp = torch.log_softmax(lm.model(input_ids=encoder, decoder_input_ids=decoder)
                                     .logits[0].double(), dim=-1)
            specials = set(lm.tokenizer.all_special_ids)
            joint.append(sum(logp[t, i].item() for t, i in enumerate(ids) if i not in specials))
    got = slot_probabilities(lm, template, CANDIDATES, batch_tokens=budget, cache=False)
    np.testing.assert_allclose(got, np.exp(joint) / np.exp(joint).sum(), rtol=1e-5)


def test_slot_probabilities_are_cached(lms):
    first = slot_probabilities(lms["bert"], "{} is kind .", CANDIDATES)
    np.testing.assert_array_equal(slot_probabilities(lms["bert"], "{} is kind .", CANDIDATES),
                                  first)


@pytest.mark.parametrize("template,candidates,kwargs,match", [
    ("people are kind .", ["paris"], {}, "exactly one"),
    ("{} and {} are kind .", ["paris"], {}, "exactly one"),
    ([], ["paris"], {}, "at least one template"),
    ("{} is kind .", [], {}, "candidates is empty"),
    ("{} is kind .", ["paris", ""], {}, "non-empty"),
    ("{} is kind .", ["paris", "paris"], {}, "distinct"),
    ("{} is kind .", ["paris"], {"mode": "typo"}, "mode must be"),
    ("[MASK] [MASK] is in {} .", ["paris"], {"skip_first_mask": True}, "mode='as-coded'"),
    ("{} is kind .", ["paris"], {"skip_first_mask": True, "mode": "as-coded"},
     "second mask token"),
])
def test_bad_slot_queries_are_refused(lms, template, candidates, kwargs, match):
    with pytest.raises(ValueError, match=match):
        slot_probabilities(lms["bert"], template, candidates, cache=False, **kwargs)


def test_as_coded_is_only_for_masked_models(lms):
    with pytest.raises(ValueError, match="masked LMs only"):
        slot_probabilities(lms["gpt2"], "{} is kind .", ["paris"], mode="as-coded", cache=False)


def test_skip_first_mask_reads_where_the_authors_find_mask_token_looks(lms, tok):
    # The ethnic_bias code's prior for an attribute-first template, worked out by hand: the
    # masked attribute takes positions 1-2, "is in" 3-4, the target's masks start at 5.
    # find_mask_token(..., last=True) skips the first mask and reads k positions from the
    # second one: for a 1-piece target position 2 (the attribute's second mask), for a 3-piece
    # target positions 2, 3, 4 ("is" and "in" are no masks at all), every piece at each.
    lm = lms["bert"]
    template = "[MASK] [MASK] is in {} ."
    got = slot_probabilities(lm, template, ["paris", "unbelievable"], mode="as-coded", log=True,
                             skip_first_mask=True, cache=False)
    one = lm.encode("[MASK] [MASK] is in [MASK] .")
    three = lm.encode("[MASK] [MASK] is in [MASK] [MASK] [MASK] .")
    assert tok.convert_ids_to_tokens(three)[:6] == ["[CLS]", "[MASK]", "[MASK]", "is", "in",
                                                    "[MASK]"]
    paris = tok.convert_tokens_to_ids("paris")
    pieces = tok.convert_tokens_to_ids(["un", "##believ", "##able"])
    with torch.inference_mode():
        lp1 = torch.log_softmax(lm.model(input_ids=torch.tensor([one])).logits[0].double(), -1)
        lp3 = torch.log_softmax(lm.model(input_ids=torch.tensor([three])).logits[0].double(), -1)
    want = [lp1[2, paris].item(), sum(lp3[p, t].item() for p in (2, 3, 4) for t in pieces)]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # With one attribute mask the second mask is the target's own: as-coded without skipping.
    single = "[MASK] is in {} ."
    np.testing.assert_allclose(
        slot_probabilities(lm, single, CANDIDATES, mode="as-coded", skip_first_mask=True,
                           cache=False),
        slot_probabilities(lm, single, CANDIDATES, mode="as-coded", cache=False), rtol=1e-6)
