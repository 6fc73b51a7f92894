"""The chapter's CB pipeline on tiny models, against forward passes done by hand."""

import numpy as np
import pytest
import torch

from biasbook import testing
from biasbook.chapters.ethnic_bias import authors, data
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
def lms(spell_models):
    return spell_models


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
    # The prior keeps the article every attribute gets there ("A [MASK]", not "An [MASK]").
    prior_text = prior_text.replace("An [MASK]", "A [MASK]")
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


def test_the_paper_prior_does_not_leak_the_article(lms, spell):
    # "An enemy is from [T]." against the prior "A [MASK]... is from [T].": the prior sentence is
    # the one a consonant-initial attribute gets too, so it cannot tell a vowel follows.
    lm = lms["bert"]
    got = cb_scores(lm, "en", targets=TARGETS, attributes=["Enemy", "Pilot"], templates=[5],
                    cache=False)
    k = len(spell.tokenize("enemy"))
    assert k == len(spell.tokenize("pilot"))
    pieces = spell.tokenize("Iraq")
    prior = masked_logprob(lm, "A " + masks(k) + " is from " + masks(4) + ".", pieces, "last")
    leaky = masked_logprob(lm, "An " + masks(k) + " is from " + masks(4) + ".", pieces, "last")
    assert got.log_p_prior[0, 0, 0] == pytest.approx(prior, rel=1e-6)
    assert got.log_p_prior[0, 0, 0] == got.log_p_prior[0, 1, 0]  # the same prior sentence
    assert abs(prior - leaky) > 1e-3  # the article does change the prior
    target = masked_logprob(lm, "An enemy is from " + masks(4) + ".", pieces, "last")
    assert got.log_p_target[0, 0, 0] == pytest.approx(target, rel=1e-6)


@torch.inference_mode()
def authors_log_norm(lm, template, attribute, nations):
    """log P' of each nation as the authors' bias_score.py computes it, ported line by line
    (log_probability_for_single_sentence with bias_utils.find_mask_token), on their template."""
    tok, vocab = lm.tokenizer, lm.tokenizer.get_vocab()
    last = (template.find("[TTT]") > template.find("[AAA]")
            and template.find("[TTT]") > template.find("[AAAs]"))

    def find_mask_token(sentence, how_many, last=False):
        for i, tk in enumerate(tok.encode(sentence)):
            if tk == tok.mask_token_id:
                if not last:
                    return list(range(i, i + how_many))
                last = False

    def softmax_rows(sentence):
        ids = torch.tensor([tok.encode(sentence)])
        return torch.softmax(lm.model(input_ids=ids).logits[0].double(), -1)

    attribute_num = len(tok.tokenize(attribute))
    out = []
    for nat in (n.lower() for n in nations):
        how_many = len(tok.tokenize(nat))
        target_mask = " ".join(["[MASK]"] * how_many)
        sentence = template.replace("[TTT]", target_mask).replace("[AAA]", attribute)
        prior_sentence = template.replace("[TTT]", target_mask).replace(
            "[AAA]", " ".join(["[MASK]"] * attribute_num))
        logits, prior_logits = softmax_rows(sentence), softmax_rows(prior_sentence)
        nat_logit = nat_prior_logit = 1.0
        for token in tok.tokenize(nat):
            for mask in find_mask_token(sentence, how_many):
                nat_logit *= float(logits[mask][vocab[token]])
            for mask in find_mask_token(prior_sentence, how_many, last):
                nat_prior_logit *= float(prior_logits[mask][vocab[token]])
        out.append(np.log(nat_logit / nat_prior_logit))
    return out


def test_as_coded_reproduces_the_authors_score_py_for_multi_piece_attributes(lms, spell):
    # The authors' English templates 2 (target first) and 5 (attribute first), read from the
    # registry resource; "enemy" and "spy" are 5 and 3 word pieces under the spelling tokenizer,
    # so in template 5 the authors read the prior at the attribute's second mask onwards.
    lm = lms["bert"]
    templates = authors.lines("templates/templates_en.txt")
    assert templates[4] == "A [AAA] is from [TTT]."
    got = cb_scores(lm, "en", targets=["Iraq", "Japan", "Cuba"], attributes=["Enemy", "Spy"],
                    templates=[2, 5], mode="as-coded", cache=False)
    want = [[authors_log_norm(lm, templates[t - 1], a, ["Iraq", "Japan", "Cuba"])
             for a in ("enemy", "spy")] for t in (2, 5)]
    np.testing.assert_allclose(got.log_p_norm, want, rtol=1e-4, atol=1e-4)  # float32 softmax
    # Reading the prior at the target's own masks would give another score in template 5 only.
    pieces = spell.tokenize("iraq")
    aligned = masked_logprob(lm, "A " + masks(5) + " is from " + masks(4) + ".", pieces, "last")
    assert abs(got.log_p_prior[1, 0, 0] - aligned * len(pieces)) > 1e-3


def test_target_token_counts_read_the_slot_in_context(lms):
    counts = target_token_counts(lms["bert"], "en", 2, TARGETS)
    assert counts.to_dict() == {"Iraq": 4, "Japan": 5, "North Korea": 10}


def test_a_subset_reads_english_template_ids_as_cb_scores_does():
    """Chinese has no template 7: it reads the same as its template 1 (zh.yml ``same_as``), so
    ``subset(templates=[7])`` keeps the scores of template 1, as scoring with [7] would."""
    from biasbook.chapters.ethnic_bias.pipeline import CBResult

    rng = np.random.default_rng(0)
    result = CBResult(language="zh", model="m", kind="causal", mode="paper", ddof=1,
                      templates=(1, 2), attributes=("Enemy",), targets=("Iraq", "Japan"),
                      terms=(("a", "b"), ("a", "b")),
                      log_p_target=rng.normal(size=(2, 1, 2)), masked_prior=None)
    part = result.subset(templates=[7])
    assert part.templates == (1,)
    np.testing.assert_array_equal(part.log_p_target, result.log_p_target[:1])
    with pytest.raises(KeyError, match=r"templates \[4\] are not in this result"):
        result.subset(templates=[4])
    with pytest.raises(ValueError, match=r"templates \[11\] not in zh"):
        result.subset(templates=[11])
