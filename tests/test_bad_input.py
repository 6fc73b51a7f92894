"""Bad input gets a precise message at the point of input, never a silent wrong result.

Each test here reproduces a probe from the bad-input review (issue 16) that used to return a wrong
number or end deep inside torch.
"""

import pytest

from biasbook.models import from_model
from biasbook.scoring import score_sentences, slot_probabilities
from biasbook.testing import tiny_model


@pytest.fixture(scope="module")
def gpt(tok):
    return from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2", kind="causal")


@pytest.mark.bad_input(
    'A bare string where a list of sentences or candidates is expected '
    '(`score_sentences(lm, "the cat")`)',
    "`TypeError` naming the parameter and the fix (`['the cat']`)")
def test_a_bare_string_is_not_read_letter_by_letter(gpt, private_cache):
    with pytest.raises(TypeError, match=r"sentences must be a list.*\['thecat'\]"):
        score_sentences(gpt, "thecat")
    with pytest.raises(TypeError, match="candidates must be a list"):
        slot_probabilities(gpt, "people in {} are kind .", "paris")


@pytest.mark.bad_input(
    "A sentence longer than the model's context window",
    "`ValueError` naming the sentence, its length and the model's limit, before any "
    'scoring')
def test_a_sentence_longer_than_the_context_is_named(gpt, private_cache):
    long = " ".join(["the cat"] * 40)  # 80 tokens; the tiny GPT-2 reads 64 positions
    with pytest.raises(ValueError, match=r"has 80 tokens, more than tiny-gpt2 can read \(6[34]\)"):
        score_sentences(gpt, ["a cat .", long], progress=False)


@pytest.mark.bad_input(
    'NaN or infinite region scores, an empty region tree or no descriptors in HERB; '
    'scores near 1e200',
    '`ValueError` naming the regions; huge scores give the same bias as scaled-down '
    'ones')
def test_herb_refuses_non_finite_or_empty_input_and_survives_huge_scores():
    import numpy as np

    from biasbook.metrics import herb

    tree = herb.RegionTree(("AF", "AS", "EU"), [-1, -1, -1])
    scores = [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match=r"region_scores of \['AS'\] are NaN or infinite"):
        herb.region_weighted_bias(tree, scores, [0.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="the region tree is empty"):
        herb.hierarchical_bias(herb.RegionTree((), []), np.zeros((0, 2)))
    with pytest.raises(ValueError, match="need at least one region and one descriptor"):
        herb.hierarchical_bias(tree, np.zeros((3, 0)))
    # scaling every score leaves the unit vectors, and so the bias, unchanged (Eq. 2)
    expected = herb.hierarchical_bias(tree, scores).overall
    huge = herb.hierarchical_bias(tree, np.asarray(scores) * 1e200).overall
    assert expected > 0 and huge == pytest.approx(expected, rel=1e-12)


@pytest.mark.bad_input(
    'A bare-string word list, infinite gender counts or NaN scores in the Bordia & '
    'Bowman metric',
    '`TypeError`/`ValueError` naming the input (the words with NaN scores)')
def test_cooccurrence_bias_refuses_bare_strings_infinite_counts_and_nan_scores():
    import numpy as np

    from biasbook.metrics.cooccurrence_bias import BiasScores, bias_regression, bias_scores

    with pytest.raises(TypeError, match="words must be a list"):
        bias_scores("ab", [1, 1], [1, 1], 1, 1)
    with pytest.raises(ValueError, match="must be finite and > 0, got inf"):
        bias_scores(["a", "b"], [1, 2], [2, 1], n_male=np.inf, n_female=2)
    good = BiasScores(("a", "b", "c"), np.array([0.0, 1.0, 2.0]))
    nan = BiasScores(("a", "b", "c"), np.array([0.0, np.nan, 2.0]))
    with pytest.raises(ValueError, match=r"generated bias scores of \['b'\] are NaN"):
        bias_regression(good, nan)


@pytest.mark.bad_input(
    'Words the tokenizer maps to its unknown token (`[UNK]`)',
    '`ValueError` listing the sentences, for every model kind; `unknown="report"` '
    'scores them with a warning and a list')
@pytest.mark.parametrize("arch,kind", [("bert", "masked"), ("gpt2", "causal"),
                                       ("bart", "encoder-decoder")])
def test_unknown_words_are_named_the_same_way_for_every_model_kind(tok, arch, kind,
                                                                   private_cache):
    lm = from_model(tiny_model(arch, len(tok)), tok, name=f"tiny-{arch}", kind=kind)
    sentences = ["people in paris are kind .", "people in kenya are kind .",
                 "people in peru are kind ."]  # kenya, peru: not in the tiny vocabulary
    with pytest.raises(ValueError, match=r"2 sentence\(s\) hold tokens unknown.*kenya.*peru"):
        score_sentences(lm, sentences, progress=False)
    with pytest.warns(UserWarning, match="2 sentence"):
        scores = score_sentences(lm, sentences, unknown="report", progress=False)
    assert scores.unknown == tuple(sentences[1:])
    with pytest.raises(ValueError, match="hold tokens unknown"):
        slot_probabilities(lm, "people in {} are kind .", ["paris", "kenya"])


@pytest.mark.bad_input(
    'A sentence with no token to score: only special tokens (a literal `[MASK]`) under a masked '
    'or encoder-decoder model, or one token under a causal model without a BOS token',
    '`ValueError` naming the sentences and why, before any scoring (it used to score NaN with '
    '0 tokens)')
@pytest.mark.parametrize("arch,kind,method,mode", [
    ("bert", "masked", "aul", "paper"), ("bert", "masked", "aula", "paper"),
    ("bert", "masked", "pll", "paper"), ("bart", "encoder-decoder", "infill", "paper"),
    ("bart", "encoder-decoder", "aul", "as-coded")])
def test_a_sentence_with_no_token_to_score_is_named(tok, arch, kind, method, mode,
                                                    private_cache):
    lm = from_model(tiny_model(arch, len(tok)), tok, name=f"tiny-{arch}", kind=kind)
    sentences = ["people in paris are kind .", "[MASK]", "[MASK] [MASK]"]
    with pytest.raises(ValueError, match=r"2 sentence\(s\) have no token to score under "
                                         r"tiny-.*\['\[MASK\]', '\[MASK\] \[MASK\]'\].*special"):
        score_sentences(lm, sentences, method, mode=mode, progress=False)


def test_one_token_under_a_causal_model_without_bos_is_named(tok, private_cache):
    import copy

    lm = copy.copy(from_model(tiny_model("llama", len(tok)), tok, name="tiny-llama"))
    lm.prefix_ids = ()  # no BOS: a text's first token is never scored
    with pytest.raises(ValueError, match=r"1 sentence\(s\) have no token .*\['a'\].*BOS"):
        score_sentences(lm, ["the cat is good", "a"], progress=False)


@pytest.mark.bad_input(
    '`batch_tokens` of 0, below 0 or not a whole number, in `score_sentences` or '
    '`slot_probabilities`',
    '`ValueError` naming the setting and its value (0 used to mean the default silently)')
@pytest.mark.parametrize("budget", [0, -5, 2.5, True])
def test_a_batch_budget_below_one_token_is_refused(gpt, budget, private_cache):
    with pytest.raises(ValueError, match=rf"batch_tokens must be a whole number >= 1.*"
                                         rf"got {budget!r}"):
        score_sentences(gpt, ["the cat is good"], batch_tokens=budget, progress=False)
    with pytest.raises(ValueError, match="batch_tokens must be"):
        slot_probabilities(gpt, "people in {} are kind .", ["paris", "london"],
                           batch_tokens=budget)
