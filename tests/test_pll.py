"""Pseudo-log-likelihood on long inputs (copies sub-batched under the token budget) and the
within_word_l2r variant (Kauf & Ivanova 2023), against references written here by hand."""

import json
import math
import random

import numpy as np
import pytest
import torch

from biasbook import models, testing
from biasbook.scoring import score_sentences, sentences
from biasbook.scoring.batching import copy_batches, token_batches

pytestmark = pytest.mark.usefixtures("one_torch_thread", "private_cache")

MULTI_PIECE = [  # un ##believ ##able, smart ##ly, cat ##s: words of several WordPiece pieces
    "people in paris are unbelievable .", "the cats are smartly quick , and unbelievable .",
    "he was un", "a", "unbelievable", "the dog is smart and kind .",
]


@pytest.fixture(scope="module")
def bert(tok):
    return models.from_model(testing.tiny_model("bert", len(tok)), tok, name="tiny-bert")


@pytest.fixture(scope="module")
def long_bert(tok):
    lm = models.from_model(testing.tiny_model("bert", len(tok), positions=512), tok,
                           name="tiny-bert-512")
    score_sentences(lm, ["a cat"], "pll", cache=False)  # its one-off probe, before shapes count
    return lm


def long_text(tok, tokens=512):
    """A text of exactly ``tokens`` tokens ([CLS] and [SEP] included), multi-piece words among
    them."""
    cycle = ["people", "in", "paris", "are", "unbelievable", ".", "the", "cats", "smartly",
             "quick", "and", "kind", ","]
    words = []
    while len(tok(" ".join(words))["input_ids"]) < tokens - 3:
        words.append(cycle[len(words) % len(cycle)])
    while len(tok(" ".join(words))["input_ids"]) < tokens:
        words.append("a")
    return " ".join(words)


@torch.inference_mode()
def by_hand(lm, text, variants=("original", "within_word_l2r")):
    """``{variant: log-probs}``, one forward per scored token on a copy masked by hand.

    A word's pieces are read from the token strings (WordPiece continuations start with ``##``),
    not from the tokenizer's word ids that the engine uses. Copies that two variants share (a
    word's last piece, words of one piece) run once.
    """
    ids = lm.encode(text)
    pieces = lm.tokenizer.convert_ids_to_tokens(ids)
    specials = set(lm.tokenizer.all_special_ids)
    memo, out = {}, {v: [] for v in variants}
    for t, token in enumerate(ids):
        if token in specials:
            continue
        for variant in variants:
            masked = list(ids)
            masked[t] = lm.tokenizer.mask_token_id
            u = t + 1
            while variant == "within_word_l2r" and u < len(ids) and pieces[u].startswith("##"):
                masked[u] = lm.tokenizer.mask_token_id
                u += 1
            key = (t, tuple(masked))
            if key not in memo:
                logits = lm.model(input_ids=torch.tensor([masked])).logits[0, t]
                memo[key] = torch.log_softmax(logits.double(), dim=-1)[token].item()
            out[variant].append(memo[key])
    return {v: np.array(lps) for v, lps in out.items()}


class Shapes:
    """Record every forward pass's input and logits shapes (hooks on the model's forward)."""

    def __init__(self, model):
        self.inputs, self.logits = [], []
        self.handles = [
            model.register_forward_pre_hook(
                lambda m, args, kwargs: self.inputs.append(tuple(kwargs["input_ids"].shape)),
                with_kwargs=True),
            model.register_forward_hook(
                lambda m, args, out: self.logits.append(tuple(out.logits.shape)))]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


def test_copy_batches_cut_as_token_batches_of_the_listed_copies():
    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(1, 12)
        lengths = [rng.randint(1, 30) for _ in range(n)]
        copies = [rng.randint(0, 6) for _ in range(n)]
        budget = rng.choice([1, 8, 40, 100, 2048])
        listed = [(i, k) for i in range(n) for k in range(copies[i])]
        want = [[listed[j] for j in batch]
                for batch in token_batches([lengths[i] for i, _ in listed], budget)]
        assert list(copy_batches(lengths, copies, budget)) == want


@pytest.fixture(scope="module")
def long_case(tok, long_bert):
    text = long_text(tok)
    return text, by_hand(long_bert, text)


@pytest.mark.parametrize("variant", ["original", "within_word_l2r"])
@pytest.mark.parametrize("budget", [2048, 300])
def test_a_512_token_sentence_matches_brute_force_within_the_budget(long_bert, long_case,
                                                                    variant, budget):
    text, want = long_case
    assert len(long_bert.encode(text)) == 512
    with Shapes(long_bert.model) as shapes:
        got = score_sentences(long_bert, [text], "pll", pll=variant, batch_tokens=budget,
                              cache=False)
    np.testing.assert_allclose(got.token_logprobs[0], want[variant], atol=1e-5)
    assert abs(got.sum[0] - want[variant].sum()) < 1e-3
    # every pass holds at most the budget's tokens: 2048 // 512 = 4 copies; one copy where the
    # sentence alone is longer than the budget (300)
    per_pass = max(1, budget // 512)
    assert all(width == 512 and rows <= per_pass for rows, width in shapes.inputs)
    assert max(rows * width for rows, width in shapes.inputs) <= max(budget, 512)
    assert len(shapes.inputs) == math.ceil(510 / per_pass)
    # the output head ran only at each copy's masked target: [copies, 1, vocabulary]
    assert all(logits == (rows, 1, len(long_bert.tokenizer))
               for logits, (rows, _) in zip(shapes.logits, shapes.inputs, strict=True))


@pytest.mark.parametrize("budget", [7, 40, 10_000])
@pytest.mark.parametrize("arch", ["bert", "albert", "roberta", "distilbert"])
def test_within_word_l2r_equals_masking_by_hand(tok, arch, budget):
    lm = models.from_model(testing.tiny_model(arch, len(tok)), tok, name=f"tiny-{arch}")
    got = score_sentences(lm, MULTI_PIECE, "pll", pll="within_word_l2r", batch_tokens=budget,
                          cache=False)
    for text, lps in zip(MULTI_PIECE, got.token_logprobs, strict=True):
        np.testing.assert_allclose(lps, by_hand(lm, text, ["within_word_l2r"])["within_word_l2r"],
                                   atol=1e-5)


def test_within_word_l2r_changes_only_pieces_followed_by_their_word(bert):
    plain, l2r = (score_sentences(bert, MULTI_PIECE, "pll", pll=v, cache=False).token_logprobs
                  for v in ("original", "within_word_l2r"))
    for text, a, b in zip(MULTI_PIECE, plain, l2r, strict=True):
        pieces = bert.tokenizer.tokenize(text)
        followed = [i + 1 < len(pieces) and pieces[i + 1].startswith("##")
                    for i in range(len(pieces))]
        assert (~np.isclose(a, b, rtol=0, atol=1e-7)).tolist() == followed, text


def test_unknown_variant_other_method_and_slow_tokenizer_are_clear_errors(bert, tmp_path):
    with pytest.raises(ValueError, match=r"pll must be one of \('original', 'within_word_l2r'\)"):
        score_sentences(bert, ["a cat"], "pll", pll="whole_word", cache=False)
    with pytest.raises(ValueError, match="variant of method 'pll', not of 'aul'"):
        score_sentences(bert, ["a cat"], "aul", pll="within_word_l2r", cache=False)
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    vocab = tmp_path / "vocab.txt"
    ranked = sorted(bert.tokenizer.get_vocab().items(), key=lambda item: item[1])
    vocab.write_text("".join(f"{token}\n" for token, _ in ranked))
    slow = models.from_model(bert.model, BertTokenizerLegacy(str(vocab)), name="tiny-bert-slow")
    assert not slow.tokenizer.is_fast  # a Python-backend (slow) tokenizer: no word ids
    with pytest.raises(ValueError, match="BertTokenizerLegacy.*slow one.*use_fast=True"):
        score_sentences(slow, ["a cat"], "pll", pll="within_word_l2r", cache=False)
    assert len(score_sentences(slow, ["a cat"], "pll", cache=False)) == 1  # original needs none


def test_the_variant_is_part_of_the_cache_key(bert):
    original = sentences.method_key(bert, "pll", "paper")
    assert original == sentences.method_key(bert, "pll", "paper", "original")
    assert json.loads(original) == ["pll", "paper", sentences.ENGINE_VERSION, []]  # as before
    assert sentences.method_key(bert, "pll", "paper", "within_word_l2r") != original
    text = ["people in paris are unbelievable ."]
    plain = score_sentences(bert, text, "pll").token_logprobs[0]
    with Shapes(bert.model) as shapes:
        l2r = score_sentences(bert, text, "pll", pll="within_word_l2r").token_logprobs[0]
        assert shapes.inputs  # computed, not read from the original's cache rows
        again = score_sentences(bert, text, "pll", pll="within_word_l2r").token_logprobs[0]
    assert len(shapes.inputs) == 1  # the second call read the cache
    assert not np.allclose(plain, l2r)
    np.testing.assert_array_equal(l2r, again)


def test_herb_masked_method_scores_masked_models_only(tok, bert):
    from biasbook.chapters.herb.model_scores import score_models
    from biasbook.chapters.herb.sentence_scores import fill_template

    gpt = models.from_model(testing.tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    regions, words = ["paris", "tokyo"], ["kind", "unbelievable"]
    got = score_models([bert, gpt], regions, words, region_scores=True,
                       masked_method="pll_word_l2r", cache=False)
    want = score_sentences(bert, list(fill_template(regions, words)), "pll", pll="within_word_l2r",
                           cache=False).mean.reshape(2, 2)
    np.testing.assert_allclose(got["tiny-bert"].scores, want)
    np.testing.assert_allclose(got["tiny-bert"].region_scores, score_sentences(
        bert, regions, "pll", pll="within_word_l2r", cache=False).mean)
    plain = score_models([gpt], regions, words, cache=False)  # causal: clm whatever it says
    np.testing.assert_array_equal(got["tiny-gpt2"].scores, plain["tiny-gpt2"].scores)
    with pytest.raises(ValueError, match="masked_method must be one of"):
        score_models([bert], regions, words, masked_method="pll-word-l2r", cache=False)


def test_herb_plan_counts_a_masked_copy_per_token_under_pll():
    from biasbook.chapters.herb import plan as herb_plan

    p = {"models": ["bert-base-cased", "smollm2-135m"], "countries": ["FR"],
         "cities_per_country": 2, "country_share": None, "robustness_models": [],
         "interval_resamples": 9}
    aul = herb_plan.work({"02-hierarchical-bias": {**p, "masked_method": "aul"}})
    pll = herb_plan.work({"02-hierarchical-bias": {**p, "masked_method": "pll_word_l2r"}})
    by = {(w.model, w.unit): w for w in pll if w.model}
    sentences = 4 * 112  # Europe, France and its two cities x 112 descriptors
    f_s = next(w for w in pll if w.model == "bert-base-cased" and w.what.startswith("f(S)"))
    assert f_s.unit == "masked forwards" and f_s.count > 5 * sentences
    assert by["smollm2-135m", "sentences"].count == sentences  # causal: as before
    assert [w.count for w in aul if w.model] == [sentences] * 2
