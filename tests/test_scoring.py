"""Sentence scores: every optimised path against plain one-sentence-at-a-time references."""

import copy
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from biasbook import models, testing
from biasbook.models import LanguageModel
from biasbook.scoring import batching, causal, score_sentences
from biasbook.scoring.batching import shared_prefix_groups, token_batches
from biasbook.scoring.causal import clm_logprobs

pytestmark = pytest.mark.usefixtures("one_torch_thread", "private_cache")

ARCHS = {"bert": "masked", "albert": "masked", "roberta": "masked", "distilbert": "masked",
         "bart": "encoder-decoder", "gpt2": "causal", "llama": "causal", "gemma3": "causal"}
SENTENCES = [
    "people in paris are kind .", "people in paris are very lazy .", "people in paris are good",
    "people in paris are unbelievable .", "people in london are kind .",
    "people in london are smartly quick .", "people in london are bad",
    "people in tokyo are kind .", "people in tokyo are un", "a", "the cat",
    "the dog is smart , quick and unbelievable .",
    # longer than the tiny Gemma's sliding window (8) and sharing an 11-token prefix
    "the cat is good and the dog is bad and he was kind .",
    "the cat is good and the dog is bad and he was lazy .",
    "the cat is good and the dog is bad and he was very very lazy .",
    "the cat is good and the dog is bad and he was quick",
    "people in paris are kind .",  # a repeat
]


@pytest.fixture(scope="module")
def lms(tok):
    return {arch: models.from_model(testing.tiny_model(arch, len(tok)), tok, name=f"tiny-{arch}")
            for arch in ARCHS}


@pytest.fixture(scope="module")
def reference(lms):
    """Memoised references: ``reference(arch, ref_function, sentences)``."""
    memo = {}

    def get(arch, function, sentences=tuple(SENTENCES)):
        if (arch, function, sentences) not in memo:
            memo[arch, function, sentences] = [function(lms[arch], s) for s in sentences]
        return memo[arch, function, sentences]

    return get


def special_ids(lm):
    return set(lm.tokenizer.all_special_ids)


def logprobs_at(logits, targets, positions):
    """Plain full log-softmax, then the target at each position."""
    logp = torch.log_softmax(logits.double(), dim=-1)
    return np.array([logp[p, t].item() for p, t in zip(positions, targets, strict=True)])


@torch.inference_mode()
def ref_aul(lm, text):
    ids = lm.encode(text)
    logits = lm.model(input_ids=torch.tensor([ids])).logits[0]
    keep = [t for t, i in enumerate(ids) if i not in special_ids(lm)]
    return logprobs_at(logits, [ids[t] for t in keep], keep)


@torch.inference_mode()
def ref_aula(lm, text):
    """Kaneko & Bollegala's code: attention averaged over layers, heads and query positions."""
    ids = lm.encode(text)
    eager = copy.deepcopy(lm.model)
    eager.set_attn_implementation("eager")
    out = eager(input_ids=torch.tensor([ids]), output_attentions=True)
    received = torch.stack(out.attentions)[:, 0].mean(dim=(0, 1)).mean(dim=0)
    keep = [t for t, i in enumerate(ids) if i not in special_ids(lm)]
    return (logprobs_at(out.logits[0], [ids[t] for t in keep], keep),
            received[keep].double().numpy())


@torch.inference_mode()
def ref_pll(lm, text):
    ids = lm.encode(text)
    values = []
    for t, token in enumerate(ids):
        if token in special_ids(lm):
            continue
        masked = list(ids)
        masked[t] = lm.tokenizer.mask_token_id
        logits = lm.model(input_ids=torch.tensor([masked])).logits[0]
        values.append(logprobs_at(logits, [token], [t])[0])
    return np.array(values)


@torch.inference_mode()
def ref_clm(lm, text):
    x = [*lm.prefix_ids, *lm.encode(text)]
    logits = lm.model(input_ids=torch.tensor([x])).logits[0]
    return logprobs_at(logits, x[1:], range(len(x) - 1))


@torch.inference_mode()
def ref_bart(lm, text, encoder_text):
    ids = lm.encode(text)
    decoder = [lm.model.config.decoder_start_token_id, *ids[:-1]]
    logits = lm.model(input_ids=torch.tensor([lm.encode(encoder_text)]),
                      decoder_input_ids=torch.tensor([decoder])).logits[0]
    keep = [t for t, i in enumerate(ids) if i not in special_ids(lm)]
    return logprobs_at(logits, [ids[t] for t in keep], keep)


# The HERB code's BART score is ``model(**tokenizer(S))`` (BART shifts S right into its decoder
# itself), i.e. exactly the plain AUL reference applied to a seq2seq model.
ref_bart_as_coded = ref_aul


def assert_matches(scores, references):
    assert len(scores.token_logprobs) == len(references)
    for got, want in zip(scores.token_logprobs, references, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(scores.sum, [r.sum() for r in references], atol=1e-5)
    np.testing.assert_allclose(scores.mean, [r.mean() for r in references], atol=1e-5)
    assert scores.n_tokens.tolist() == [len(r) for r in references]


BUDGETS = [7, 40, 10_000]  # one sentence per pass, a few, all at once


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("arch", ["bert", "albert", "roberta", "distilbert"])
def test_aul_equals_the_one_sentence_reference(lms, reference, arch, budget):
    scores = score_sentences(lms[arch], SENTENCES, "aul", batch_tokens=budget, cache=False)
    assert_matches(scores, reference(arch, ref_aul))


@pytest.mark.parametrize("budget", [7, 10_000])
@pytest.mark.parametrize("arch", ["bert", "roberta", "distilbert"])
def test_aula_equals_the_authors_definition(lms, reference, arch, budget):
    scores = score_sentences(lms[arch], SENTENCES, "aula", batch_tokens=budget, cache=False)
    refs = reference(arch, ref_aula)
    for got, got_w, (want, want_w) in zip(scores.token_logprobs, scores.token_weights, refs,
                                          strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)
        np.testing.assert_allclose(got_w, want_w, atol=1e-6)
    np.testing.assert_allclose(scores.mean, [(lp * w).mean() for lp, w in refs], atol=1e-6)
    assert lms[arch].model.config._attn_implementation == "sdpa"  # restored afterwards


@pytest.mark.parametrize("budget", [40, 10_000])
@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_pll_equals_masking_one_token_at_a_time(lms, reference, arch, budget):
    sentences = tuple(SENTENCES[3:12])  # one pass per token: a subset keeps the reference quick
    scores = score_sentences(lms[arch], sentences, "pll", batch_tokens=budget, cache=False)
    assert_matches(scores, reference(arch, ref_pll, sentences))


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("arch", ["gpt2", "llama", "gemma3"])
def test_clm_equals_the_one_sentence_reference(lms, reference, arch, budget):
    scores = score_sentences(lms[arch], SENTENCES, batch_tokens=budget, cache=False)
    assert scores.method == "clm"
    assert_matches(scores, reference(arch, ref_clm))
    # the first token is conditioned on BOS: every token of the sentence is scored
    assert scores.n_tokens.tolist() == [len(lms[arch].encode(s)) for s in SENTENCES]


@pytest.mark.parametrize("arch", ["gpt2", "llama", "gemma3"])
def test_prefix_cached_and_uncached_causal_scores_agree(lms, arch):
    lm = lms[arch]
    seqs = [lm.encode(s) for s in SENTENCES]
    groups, _ = shared_prefix_groups([[*lm.prefix_ids, *s] for s in seqs])
    assert max(len(p) for p in groups) > 8  # a prefix longer than Gemma's sliding window
    results = {}
    for share in (True, False):
        found = {}
        with torch.inference_mode():
            for indices, arrays in clm_logprobs(lm, seqs, 64, share_prefixes=share):
                found.update(zip(indices, arrays, strict=True))
        results[share] = [found[i] for i in range(len(seqs))]
    for cached, plain in zip(results[True], results[False], strict=True):
        np.testing.assert_allclose(cached, plain, atol=1e-5)


def test_full_logits_fallback_when_backbone_and_head_do_not_reproduce_the_model(lms, reference):
    lm = copy.copy(lms["gpt2"])
    lm.model = copy.deepcopy(lm.model)
    causal._SPLITS[lm.model] = None  # as if the probe had found extra logit processing
    scores = score_sentences(lm, SENTENCES, batch_tokens=40, cache=False)
    assert_matches(scores, reference("gpt2", ref_clm))


def test_causal_model_without_bos_leaves_the_first_token_unscored(lms):
    lm = copy.copy(lms["llama"])
    lm.prefix_ids = ()
    scores = score_sentences(lm, ["the cat is good"], cache=False)
    x = lm.encode("the cat is good")
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([x])).logits[0]
    np.testing.assert_allclose(scores.token_logprobs[0], logprobs_at(logits, x[1:], range(3)),
                               atol=1e-5)
    assert scores.n_tokens.tolist() == [3]  # one token left, "a", would be an error (no BOS)


@pytest.mark.parametrize("budget", [7, 10_000])
def test_bart_infill_is_the_likelihood_given_a_lone_mask(lms, budget):
    lm = lms["bart"]
    scores = score_sentences(lm, SENTENCES, batch_tokens=budget, cache=False)
    assert scores.method == "infill"
    assert_matches(scores, [ref_bart(lm, s, lm.tokenizer.mask_token) for s in SENTENCES])


@pytest.mark.parametrize("budget", [7, 10_000])
def test_bart_as_coded_is_the_herb_codes_reconstruction_score(lms, reference, budget):
    lm = lms["bart"]
    scores = score_sentences(lm, SENTENCES, "aul", mode="as-coded", batch_tokens=budget,
                             cache=False)
    assert_matches(scores, reference("bart", ref_bart_as_coded))
    # ... which is the teacher-forced P(S | S): the encoder sees the sentence it must produce
    assert_matches(scores, [ref_bart(lm, s, s) for s in SENTENCES])


@pytest.mark.parametrize("arch,method", [("bert", "aul"), ("albert", "pll"), ("gpt2", "clm"),
                                         ("gemma3", "clm"), ("bart", "infill")])
def test_padding_and_batch_composition_never_change_a_score(lms, arch, method):
    lm, target = lms[arch], "people in paris are kind ."
    alone = score_sentences(lm, [target], method, cache=False).token_logprobs[0]
    crowd = SENTENCES[8::-1] + [target + " and the dog is very very unbelievable"] * 2
    for budget in BUDGETS:
        scores = score_sentences(lm, crowd, method, batch_tokens=budget, cache=False)
        np.testing.assert_allclose(scores.token_logprobs[crowd.index(target)], alone, atol=1e-5)


class ConstantLogits(torch.nn.Module):
    """A stub 'masked LM' that predicts the same logits at every position."""

    def __init__(self, logits):
        super().__init__()
        self.logits = torch.nn.Parameter(logits, requires_grad=False)

    def forward(self, input_ids, attention_mask=None, output_attentions=False):
        return SimpleNamespace(logits=self.logits.expand(*input_ids.shape, -1))


def test_aul_of_a_hand_worked_example(tok):
    # logits 0 everywhere except ln 2 for "cat" and ln 3 for "dog": Z = (V - 2) + 2 + 3 = V + 3
    vocab = len(tok)
    logits = torch.zeros(vocab)
    logits[tok.convert_tokens_to_ids("cat")] = math.log(2)
    logits[tok.convert_tokens_to_ids("dog")] = math.log(3)
    lm = LanguageModel("stub", ConstantLogits(logits), tok, "masked", "stub-fingerprint")
    # [CLS] the cat dog [SEP]: the specials are not scored; "the" has probability 1 / (V + 3)
    expected = (math.log(1) + math.log(2) + math.log(3)) / 3 - math.log(vocab + 3)
    scores = score_sentences(lm, ["the cat dog", "the cat dog is very good ."], cache=False)
    assert scores.n_tokens[0] == 3
    assert scores.mean[0] == pytest.approx(expected, abs=1e-6)
    assert scores.sum[0] == pytest.approx(3 * expected, abs=1e-6)


def test_scores_come_back_in_input_order_with_repeats(lms):
    scores = score_sentences(lms["gpt2"], ["a", "the cat", "a"], cache=False)
    assert scores.sentences == ["a", "the cat", "a"]
    assert scores.n_tokens.tolist() == [1, 2, 1] and scores.mean[0] == scores.mean[2]
    frame = scores.to_frame()
    assert frame["sentence"].tolist() == ["a", "the cat", "a"] and len(scores) == 3


@pytest.mark.parametrize("sentences,match", [([], "at least one"), (["a", ""], "sentence 1"),
                                             (["  "], "non-empty"), ([None], "strings only")])
def test_empty_input_is_refused(lms, sentences, match):
    with pytest.raises((ValueError, TypeError), match=match):
        score_sentences(lms["bert"], sentences, cache=False)


@pytest.mark.parametrize("arch,method,mode,match", [
    ("gpt2", "aul", "paper", "does not fit"), ("bert", "clm", "paper", "does not fit"),
    ("gemma3", "pll", "paper", "does not fit"), ("bert", "infill", "paper", "does not fit"),
    ("bart", "aula", "paper", "does not fit"), ("bart", "aul", "paper", "undefined"),
    ("bert", "bleu", "paper", "unknown method"), ("bert", "aul", "typo", "mode must be"),
])
def test_a_method_that_does_not_fit_the_model_is_refused(lms, arch, method, mode, match):
    with pytest.raises(ValueError, match=match):
        score_sentences(lms[arch], ["a"], method, mode=mode, cache=False)


def test_as_coded_equals_paper_where_the_herb_code_only_differs_by_padding(lms):
    paper = score_sentences(lms["bert"], SENTENCES, "aul", cache=False)
    coded = score_sentences(lms["bert"], SENTENCES, "aul", mode="as-coded", cache=False)
    np.testing.assert_array_equal(paper.mean, coded.mean)


def test_token_batches_respect_the_budget():
    lengths = [5, 1, 9, 3, 3, 20]
    batches = token_batches(lengths, batch_tokens=10)
    assert sorted(i for b in batches for i in b) == list(range(6))
    for batch in batches:
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= 10


def test_shared_prefixes_are_true_prefixes_of_every_member():
    seqs = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [1, 2, 3, 7], [1, 2, 3, 8, 9], [1, 9], [2, 2]]
    groups, singles = shared_prefix_groups(seqs, min_group=3)
    assert groups == {(1, 2, 3): [0, 1, 2, 3]} and singles == [4, 5]
    for prefix, members in groups.items():
        assert all(tuple(seqs[i][: len(prefix)]) == prefix and len(seqs[i]) > len(prefix)
                   for i in members)


@pytest.mark.parametrize("arch", ["gpt2", "llama", "gemma3"])
def test_prefixes_of_different_lengths_share_passes_exactly(lms, arch):
    """HERB-like templates: regions of one and two tokens, so prefixes of two lengths."""
    lm = lms[arch]
    sentences = [f"{region} {word}" for region in ("paris", "tokyo london", "unbelievable")
                 for word in ("kind .", "lazy .", "good .", "very bad .", "un")]
    xs = [[*lm.prefix_ids, *lm.encode(s)] for s in sentences]
    groups, singles = shared_prefix_groups(xs)
    window = lm.model.config.get_text_config().sliding_window if arch == "gemma3" else None
    chunks = list(causal._prefix_chunks(groups, xs, 64, window))
    assert not singles and len(chunks) == 1 and len({len(p) for p in chunks[0]}) == 3
    scores = score_sentences(lm, sentences, batch_tokens=64, cache=False)
    assert_matches(scores, [ref_clm(lm, s) for s in sentences])


def test_prefix_chunks_keep_padded_positions_inside_a_sliding_window():
    xs = [[5, 1, *[2] * n, 9] for n in range(6)]  # prefixes of 2..7 tokens, then one target
    groups = {tuple(x[:-1]): [i] for i, x in enumerate(xs)}
    mixed = list(causal._prefix_chunks(groups, xs, batch_tokens=1000, window=None))
    assert [len(c) for c in mixed] == [6]
    # padded to 7 prefix tokens + 0 inputs = 7 < 8 fits, so only a budget cut splits them
    assert [len(c) for c in causal._prefix_chunks(groups, xs, 1000, window=8)] == [6]
    assert [len(c) for c in causal._prefix_chunks(groups, xs, 1000, window=5)] == [3, 1, 1, 1]
    assert [len(c) for c in causal._prefix_chunks(groups, xs, 12, window=None)] == [3, 2, 1]


@pytest.mark.parametrize("arch", ["gpt2", "gemma3"])
def test_head_blocks_and_vocabulary_slices_never_change_a_score(lms, reference, arch,
                                                                 monkeypatch):
    """Rows projected 3 at a time onto 2-entry slices of the vocabulary; many queue flushes."""
    monkeypatch.setattr(batching, "ROW_BLOCK", 3)
    monkeypatch.setattr(batching, "CHUNK_ELEMENTS", 6)
    scores = score_sentences(lms[arch], SENTENCES, batch_tokens=7, cache=False)
    assert_matches(scores, reference(arch, ref_clm))
