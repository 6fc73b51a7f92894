"""The ethnic-bias chapter's mitigation runs: corpora, plan, paper rows, and the masked- and
causal-LM paths end to end on tiny stand-in models (the paper profile's code paths)."""

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon

from biasbook import paths, results
from biasbook.chapters.ethnic_bias import mitigation as m
from biasbook.chapters.ethnic_bias import mitigation_runs as mr
from biasbook.chapters.ethnic_bias import mitigation_tables as mt
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
    assert mt.paper_cb("x->en", "monolingual", "rand", "tr") == 3.446
    assert mt.paper_cb("x->en", "multilingual", "base", "zh") == 208.285
    assert mt.paper_cb("x->en", "monolingual", "cda", "el") == 7.278
    assert mt.paper_cb("x->en", "monolingual", "rand", "el") is None  # Table 8 has no Rand.
    assert mt.paper_cb("en->x", "monolingual", "rand", "en") == 0.703
    assert mt.paper_cb("en->x", "monolingual", "base", "en") == 0.807


def test_plan_uses_stand_ins_and_skips_what_has_no_text():
    steps = mr.plan(["de", "ar"], ["ko"], monolingual={"en": "E", "de": "D"}, multilingual="M",
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
    # One German held-out sentence holds characters the tiny tokenizer lacks: that is reported.
    with pytest.warns(UserWarning, match="unknown to tiny-"):
        outcomes = mr.run_variants(source, "de", m.VARIANTS, direction="x->en", role="monolingual",
                                  recipe=TINY_RECIPE, evaluation=TINY_EVAL,
                                  target=(english, "en"), progress=False)
    table = mt.table(outcomes)
    assert table["variant"].tolist() == list(m.VARIANTS)
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
    shares = mt.distributions(outcomes, "Enemy", 1)
    assert shares.shape == (3, 5) and np.allclose(shares.sum(), 1)


def test_a_language_without_text_gets_its_base_row_and_says_it_has_no_quality_measure(
        private_cache, one_torch_thread, tmp_path):
    steps = mr.plan(["el"], [], monolingual={"en": "english"}, multilingual="multi",
                   variants=list(m.VARIANTS))
    assert [(s.language, s.variants) for s in steps] == [("el", ("base",))]
    tok = tiny_tokenizer(spell=True)
    greek = "".join(tok.backend_tokenizer.normalizer.normalize_str(
        (paths.project_data_dir() / "ethnic-bias" / "el.yml").read_text(encoding="utf-8")))
    chars = sorted({c for c in greek if not c.isspace()} - set(tok.get_vocab()))
    tok.add_tokens(chars)  # the tiny model must spell Greek: the engine refuses [UNK]
    lm = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2-el")
    rec = results.Recorder("ethnic-bias", "04-mitigation", {}, run_dir=tmp_path)
    outcomes = mr.run_plan(steps, lambda name: lm, recipe=TINY_RECIPE, evaluation=TINY_EVAL,
                          progress=False)
    found = mt.table(outcomes)
    for key, column in (("mitigation_cb", "cb"), ("mitigation_perplexity", "perplexity")):
        rec.metrics(key, found, value=column, labels=["direction", "language", "aligned_to"])
    assert [r["key"] for r in rec.record["metrics"]] == ["mitigation_cb"]  # no NaN recorded
    assert rec.record["metrics"][0]["aligned_to"] is None
    row = found.iloc[0]
    assert row["variant"] == "base" and np.isfinite(row["cb"]) and np.isnan(row["perplexity"])
    assert row["quality"] == "none: no el text is mirrored"
    assert row["paper_cb"] == 16.126


def test_rows_are_set_against_the_monolingual_reference_of_their_direction_and_language():
    frame = pd.DataFrame([
        # direction, language, role, variant, cb, paper_cb, perplexity
        ("en->x", "en", "monolingual", "base", 0.8, 0.807, 50.0),
        ("en->x", "en", "monolingual", "ft", 0.6, 0.618, 49.0),
        ("en->x", "en", "monolingual", "align", 1.2, 0.643, 51.0),
        ("en->x", "en", "multilingual", "base", 0.4, 0.658, 80.0),
        ("x->en", "ko", "monolingual", "base", 3.0, 15.293, 20.0),
        ("x->en", "ko", "monolingual", "rand", 1.5, 6.087, 4000.0),
        ("x->en", "el", "monolingual", "base", 5.0, 16.126, np.nan),
    ], columns=["direction", "language", "role", "variant", "cb", "paper_cb", "perplexity"])
    got = mt.against(frame).set_index(["language", "role", "variant"])
    assert len(got) == 4  # base rows are the reference, el has nothing to compare
    align = got.loc[("en", "monolingual", "align")]
    assert align["cb_change"] == pytest.approx(0.5)
    assert align["paper_change"] == pytest.approx(0.643 / 0.807 - 1)
    assert not align["agrees"] and align["usable"]  # ours up, the paper's down; ppl 1.02x
    method1 = got.loc[("en", "multilingual", "base")]  # M-BERT against BERT, both unchanged
    assert method1["cb_change"] == pytest.approx(-0.5) and method1["agrees"]
    assert method1["perplexity_ratio"] == pytest.approx(1.6) and method1["usable"]
    rand = got.loc[("ko", "monolingual", "rand")]
    assert rand["agrees"] and not rand["usable"]  # lower CB, but a broken model (200x)
    # Against the same fine-tuning without W (Table 5's point: alignment raises English's CB).
    vs_ft = mt.against(frame, "ft").set_index(["language", "role", "variant"])
    assert list(vs_ft.index) == [("en", "monolingual", "align")]
    assert vs_ft["cb_change"].item() == pytest.approx(1.2 / 0.6 - 1)
    assert vs_ft["paper_change"].item() == pytest.approx(0.643 / 0.618 - 1)
    assert vs_ft["agrees"].item()


def fake_outcomes(rng):
    """A factory of outcomes with random log P' over three targets, two attributes, template 2."""
    from biasbook.chapters.ethnic_bias.pipeline import CBResult

    def outcome(direction, language, variant, aligned_to=None, role="monolingual"):
        r = CBResult(language=language, model="m", kind="causal", mode="paper", ddof=1,
                     templates=(2,), attributes=("Enemy", "Pirate"),
                     targets=("Iraq", "Japan", "Cuba"), terms=(("Iraq", "Japan", "Cuba"),),
                     log_p_target=rng.normal(size=(1, 2, 3)), masked_prior=None)
        return m.Outcome({"direction": direction, "language": language, "model": "m",
                          "variant": variant, "aligned_to": aligned_to, "role": role}, r)

    return outcome


def test_table9_form_measures_each_row_against_the_english_base():
    outcome = fake_outcomes(np.random.default_rng(0))
    english = outcome("en->x", "en", "base")
    rows = [outcome("x->en", "ko", "ft"), outcome("x->en", "ko", "align", "en"), english,
            outcome("en->x", "en", "ft"), outcome("en->x", "en", "align", "ko"),
            outcome("en->x", "en", "base", role="multilingual")]
    got = mt.jsd_to_english(rows)
    assert got["paper"].tolist() == [0.618, 0.544, 0.164, 0.214]  # Table 9, ko row
    p = english.result.distribution("Enemy", 2)
    q = rows[1].result.distribution("Enemy", 2)
    r = english.result.distribution("Pirate", 2)
    s = rows[1].result.distribution("Pirate", 2)
    want = (jensenshannon(p, q) ** 2 + jensenshannon(r, s) ** 2) / 2
    assert got.loc[1, "jsd_to_english_base"] == pytest.approx(want)
    assert mt.jsd_to_english(rows[:2]).empty  # no English base row


def test_mitigation_figure_has_one_panel_per_group_with_variants_to_compare():
    from biasbook.chapters.ethnic_bias import figures

    outcome = fake_outcomes(np.random.default_rng(1))
    rows = [outcome("x->en", x, v) for x in ("de", "es", "ko", "tr") for v in ("base", "ft")]
    rows.append(outcome("x->en", "ar", "base"))  # alone: nothing to compare, no panel
    fig = figures.mitigation_shares(rows, "Enemy", 2, ncols=3)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 6 and len(visible) == 4  # 2 rows of 3, two panels hidden
    assert visible[2].get_title() == "x->en ko (m)"
    heights = [p.get_height() for p in visible[0].patches]
    shares = mt.distributions(rows[:2], "Enemy", 2)
    assert sorted(heights) == pytest.approx(sorted(shares.to_numpy().ravel()))
    with pytest.raises(ValueError, match="more than one variant"):
        figures.mitigation_shares(rows[-1:], "Enemy", 2)
