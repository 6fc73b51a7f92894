"""The ethnic-bias chapter's mitigation runs: corpora, plan, paper rows, and the masked- and
causal-LM paths end to end on tiny stand-in models (the paper profile's code paths)."""

import numpy as np
import pytest

from biasbook.chapters.ethnic_bias import mitigation as m
from biasbook.chapters.ethnic_bias import parallel
from biasbook.chapters.ethnic_bias.pipeline import cb_scores
from biasbook.models import from_model
from biasbook.testing import tiny_model, tiny_tokenizer


def test_xquad_questions_pair_up_by_id():
    pairs = parallel.parallel_pairs("tr")
    assert len(pairs) == 1190
    assert pairs[0][1] == "How many points did the Panthers defense surrender?"
    assert "Panthers" in pairs[0][0]


def test_korean_text_comes_from_news_and_kornli():
    pairs = parallel.parallel_pairs("ko")
    assert len(pairs) == 1000 and pairs[0][1].startswith("After keeping the world's most")
    assert len(parallel.source_text("ko", "heldout")) == 2000
    train = parallel.source_text("ko", "train")
    assert len(train) == len(set(train)) > 5000


def test_heldout_articles_are_not_trained_on():
    train, heldout = (set(parallel.source_text("de", s)) for s in parallel.SPLITS)
    assert train and heldout and not train & heldout


def test_languages_without_mirrored_text_are_refused():
    assert not parallel.has_corpus("ar")
    with pytest.raises(ValueError, match="no parallel corpus for 'el'"):
        parallel.source_text("el", "train")


def test_anchor_corpus_directions():
    x_to_en = m.anchor_corpus("de", "en")
    assert m.anchor_corpus("en", "de")[0] == x_to_en[0][::-1]
    with pytest.raises(ValueError, match="between English and another"):
        m.anchor_corpus("de", "es")


def test_counterfactual_text_uses_the_languages_country_names():
    texts = ["미국에서 온 사람과 일본 사람", "중국은 크다"]
    out = m.counterfactual_text(texts, "ko", targets=["America", "Japan", "China", "Egypt"])
    assert sum(out.before.values()) == sum(out.after.values()) == 3
    assert out.spread <= 1


def test_paper_rows():
    assert m.paper_cb("x->en", "monolingual", "rand", "tr") == 3.446
    assert m.paper_cb("x->en", "multilingual", "base", "zh") == 208.285
    assert m.paper_cb("x->en", "monolingual", "cda", "el") == 7.278
    assert m.paper_cb("x->en", "monolingual", "rand", "el") is None  # Table 8 has no Rand.
    assert m.paper_cb("en->x", "monolingual", "rand", "en") == 0.703
    assert m.paper_cb("en->x", "monolingual", "base", "en") == 0.807


def test_plan_uses_stand_ins_and_skips_what_has_no_text():
    steps = m.plan(["de", "ar"], ["ko"], monolingual={"en": "E", "de": "D"}, multilingual="M",
                   variants=["base", "ft", "align"])
    got = [(s.direction, s.language, s.source, s.role, s.variants, s.target, s.stand_in)
           for s in steps]
    assert got == [
        ("x->en", "de", "D", "monolingual", ("base", "ft", "align"), ("E", "en"), False),
        ("x->en", "de", "M", "multilingual", ("base", "ft"), None, False),
        ("x->en", "ar", "M", "monolingual", ("base",), ("E", "en"), True),
        ("en->x", "en", "E", "monolingual", ("base", "ft"), None, False),
        ("en->x", "en", "M", "multilingual", ("base", "ft"), None, False),
        ("en->x", "en", "E", "monolingual", ("align",), ("M", "ko"), False),
    ]


def test_sample_is_seeded_and_ordered():
    texts = [str(i) for i in range(20)]
    a = m.sample(texts, 5, seed=1)
    assert a == m.sample(texts, 5, seed=1) and a == sorted(a, key=int) and len(set(a)) == 5
    assert m.sample(texts, None, seed=1) == texts


TINY_RECIPE = m.Recipe(epochs=1, lr=1e-2, batch_size=4, max_length=32, train_sentences=8,
                       anchor_pairs=40, anchor_max_chars=40, max_anchors=200)
TINY_EVAL = m.Evaluation(templates=[1], attributes=["Enemy", "Pirate"],
                         targets=["Iraq", "Japan", "Cuba"], heldout_sentences=4,
                         heldout_max_chars=40)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["bert", "gpt2"])
def test_all_variants_run_end_to_end_on_tiny_stand_ins(arch, private_cache, one_torch_thread):
    """The paper profile's path (masked LMs: monolingual X and English BERTs) and the offline
    one (causal LMs), with two tiny random-init models standing in for the X and English ones."""
    tok = tiny_tokenizer(spell=True)
    source = from_model(tiny_model(arch, len(tok), seed=0), tok, name=f"tiny-{arch}-de")
    english = from_model(tiny_model(arch, len(tok), seed=1), tok, name=f"tiny-{arch}-en")
    rows = []
    outcomes = m.run_variants(source, "de", m.VARIANTS, direction="x->en", role="monolingual",
                              recipe=TINY_RECIPE, evaluation=TINY_EVAL, target=(english, "en"),
                              on_row=rows.append, progress=False)
    table = m.table(outcomes)
    assert table["variant"].tolist() == list(m.VARIANTS) and len(rows) == 5
    assert np.isfinite(table[["cb", "perplexity"]].to_numpy()).all()
    base = cb_scores(source, "de", templates=[1], attributes=["Enemy", "Pirate"],
                     targets=["Iraq", "Japan", "Cuba"])
    assert table.loc[0, "cb"] == pytest.approx(base.cb)
    assert table["paper_cb"].tolist() == [5.846, 5.604, 4.831, 4.476, 3.990]
    assert outcomes[4].details["anchors"]["anchors"] > 0
    assert outcomes[2].details["train_sentences"] == 8
    # Fine-tuning changed the model: the scores of every fine-tuned variant differ from base.
    for o in outcomes[1:]:
        assert not np.allclose(o.result.log_p_target, outcomes[0].result.log_p_target)
    shares = m.distributions(outcomes, "Enemy", 1)
    assert shares.shape == (3, 5) and np.allclose(shares.sum(), 1)
