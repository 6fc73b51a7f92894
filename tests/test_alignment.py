"""Contextual word alignment (biasbook.mitigation.alignment, .anchors): Procrustes, anchors,
vectors, and head-only fine-tuning with its objectives (biasbook.training.objectives), on closed
forms, hand-built corpora and tiny random-init models."""

import copy

import numpy as np
import pytest
import scipy.linalg
import torch

from biasbook.mitigation import alignment as al
from biasbook.mitigation import anchors as an
from biasbook.models import from_model
from biasbook.testing import tiny_model
from biasbook.training import objectives

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ------------------------------------------------------------------------------ Procrustes


def test_procrustes_recovers_a_known_rotation_exactly():
    rng = np.random.default_rng(0)
    R = scipy.stats.ortho_group.rvs(16, random_state=3)
    X = rng.normal(size=(200, 16))
    W = al.procrustes(X, X @ R.T)  # y_i = R x_i
    np.testing.assert_allclose(W, R, atol=1e-10)


def test_procrustes_matches_scipy_and_beats_other_rotations_on_noisy_anchors():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 5))
    Y = X @ scipy.stats.ortho_group.rvs(5, random_state=0).T + 0.3 * rng.normal(size=(60, 5))
    W = al.procrustes(X, Y)
    R, _ = scipy.linalg.orthogonal_procrustes(X, Y)  # argmin ||X R - Y||: W = R^T
    np.testing.assert_allclose(W, R.T, atol=1e-10)
    np.testing.assert_allclose(W @ W.T, np.eye(5), atol=1e-12)
    best = np.linalg.norm(X @ W.T - Y)
    others = [np.linalg.norm(X @ al.random_orthogonal(5, s).T - Y) for s in range(200)]
    assert best < min(others)


@pytest.mark.parametrize("X, Y, message", [
    (np.ones((3, 2)), np.ones((3, 3)), "same shape"),
    (np.ones((0, 2)), np.ones((0, 2)), "no anchors"),
    (np.full((2, 2), np.nan), np.ones((2, 2)), "NaN"),
])
def test_procrustes_rejects_bad_anchors(X, Y, message):
    with pytest.raises(ValueError, match=message):
        al.procrustes(X, Y)


def test_match_dimensions_pads_a_narrow_target_and_projects_a_wide_one_losslessly():
    Y = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(al.match_dimensions(Y, 3), [[0, 1, 0], [2, 3, 0], [4, 5, 0]])
    rng = np.random.default_rng(0)
    wide = rng.normal(size=(40, 3)) @ rng.normal(size=(3, 7))  # rank 3 in 7 dimensions
    narrow = al.match_dimensions(wide, 3)
    assert narrow.shape == (40, 3)
    # An isometry of the span: norms and inner products are kept.
    np.testing.assert_allclose(narrow @ narrow.T, wide @ wide.T, atol=1e-9)
    few = rng.normal(size=(4, 7))  # fewer anchors than dimensions
    assert al.match_dimensions(few, 5).shape == (4, 5)
    np.testing.assert_allclose(al.match_dimensions(few, 5) @ al.match_dimensions(few, 5).T,
                               few @ few.T, atol=1e-9)


def test_random_orthogonal_is_orthogonal_and_seeded():
    W = al.random_orthogonal(6, seed=2)
    np.testing.assert_allclose(W.T @ W, np.eye(6), atol=1e-12)
    np.testing.assert_array_equal(W, al.random_orthogonal(6, seed=2))
    assert not np.allclose(W, al.random_orthogonal(6, seed=3))


# --------------------------------------------------------------------------------- anchors


def test_word_spans_split_scripts_as_documented():
    text = "미국에서 온 사람은 해적이다. Türkiye'den 3 kişi"
    assert [text[s:e] for s, e in an.word_spans(text)] == [
        "미국에서", "온", "사람은", "해적이다", ".", "Türkiye", "'", "den", "3", "kişi"]


DE = ["das haus ist klein", "das haus ist gross", "das buch ist klein", "ein buch",
      "ein haus", "klein ist das buch"]
EN = ["the house is small", "the house is big", "the book is small", "a book", "a house",
      "small is the book"]


def test_fast_align_links_a_toy_corpus_correctly_even_when_reordered():
    links = an.align_words([s.split() for s in DE * 3], [s.split() for s in EN * 3])
    assert links[0] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert links[5] == [(0, 0), (1, 1), (2, 2), (3, 3)]  # klein-small ... buch-book


def test_align_words_rejects_unequal_sides():
    with pytest.raises(ValueError, match="one target sentence per source"):
        an.align_words([["a"]], [])


def test_anchor_pairs_keep_one_to_one_word_links_with_their_spans():
    pairs = [(d + " .", e + " .") for d, e in zip(DE, EN, strict=True)] * 3
    anchors = an.anchor_pairs(pairs, cache=False)
    # 3 copies x (4 + 4 + 4 + 2 + 2 + 4) words; the full stops are not words.
    assert len(anchors) == 3 * 20
    first = [(w, pairs[0][0][s:e]) for w, (s, e) in
             zip(anchors.src_word[:4], anchors.src_span[:4].tolist(), strict=True)]
    assert first == [("das", "das"), ("haus", "haus"), ("ist", "ist"), ("klein", "klein")]
    assert anchors.trg_span[3].tolist() == [13, 18]  # "small" in "the house is small ."
    assert anchors.top_pairs(1) == [("das", "the", 12)]
    capped = an.anchor_pairs(pairs, max_per_pair=2, cache=False)
    assert max(c for _, _, c in capped.top_pairs(1)) == 2
    assert len(an.anchor_pairs(pairs, max_anchors=7, cache=False)) == 7
    few = an.anchor_pairs(pairs, sentences=2, cache=False)
    assert len(set(few.sentence.tolist())) == 2
    assert len(few) == sum(len(pairs[k][0].split()) - 1 for k in set(few.sentence.tolist()))


def test_anchor_pairs_drop_words_linked_to_two_words():
    # "haustür" always translates to two words, so its links are not one-to-one.
    pairs = [("die haustür", "the house door"), ("die tür", "the door"),
             ("das haus", "the house")] * 4
    anchors = an.anchor_pairs(pairs, cache=False)
    assert "haustür" not in anchors.src_word
    assert ("tür", "door") in {(s, t) for s, t, _ in anchors.top_pairs(10)}


# ------------------------------------------------------------------------------ vectors


@pytest.fixture(scope="module")
def bert(tok):
    return from_model(tiny_model("bert", len(tok), seed=0), tok, name="tiny-bert")


@pytest.fixture(scope="module")
def gpt2(tok):
    return from_model(tiny_model("gpt2", len(tok), seed=0), tok, name="tiny-gpt2")


def test_word_vectors_average_the_sub_tokens_of_a_word(bert, tok):
    text = "the cat is unbelievable ."
    spans = [(4, 7), (11, 23)]  # "cat" and "unbelievable" (un ##believ ##able)
    got = al.word_vectors(bert, [text], [spans], cache=False)
    ids = tok(text)["input_ids"]  # [CLS] the cat is un ##believ ##able . [SEP]
    with torch.no_grad():
        states = bert.model.bert(torch.tensor([ids]), output_hidden_states=True)
    last = states.hidden_states[-1][0]
    np.testing.assert_allclose(got[0], last[2].numpy(), atol=1e-6)
    np.testing.assert_allclose(got[1], last[4:7].mean(0).numpy(), atol=1e-6)
    layer0 = al.word_vectors(bert, [text], [spans[:1]], layer=0, cache=False)
    np.testing.assert_allclose(layer0[0], states.hidden_states[0][0, 2].numpy(), atol=1e-6)


def test_word_vectors_of_a_causal_model_read_after_the_bos_token(gpt2, tok):
    text = "people in paris are kind"
    got = al.word_vectors(gpt2, [text, "a dog"], [[(10, 15)], [(2, 5)]], cache=False)
    ids = [tok.bos_token_id, *tok(text, add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        last = gpt2.model.transformer(torch.tensor([ids]), output_hidden_states=True)
    np.testing.assert_allclose(got[0], last.hidden_states[-1][0, 3].numpy(), atol=1e-5)
    assert got.shape == (2, 16)


def test_word_vectors_name_a_word_without_tokens(bert):
    with pytest.raises(ValueError, match="has no token"):
        al.word_vectors(bert, ["a cat"], [[(1, 1)]], cache=False)
    with pytest.raises(ValueError, match="more than tiny-bert reads"):
        al.word_vectors(bert, ["a cat " * 40], [[(0, 1)]], cache=False)


def test_alignment_matrix_maps_a_model_onto_itself_as_the_identity(bert):
    sentences = [f"the {n} {v} {a} ." for n in ("cat", "dog", "man", "woman")
                 for v in ("is", "was") for a in ("good", "bad", "kind", "lazy", "smart")]
    pairs = [(s, s) for s in sentences]  # 160 anchors in 40 contexts span all 16 dimensions
    anchors = an.anchor_pairs(pairs, cache=False)
    W = al.alignment_matrix(bert, bert, pairs, anchors, cache=False)
    np.testing.assert_allclose(W, np.eye(16), atol=1e-5)


# ------------------------------------------------------------------------- head insertion


def _copy(lm):
    return copy.deepcopy(lm.model)


def _logits(model, ids):
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits


IDS = [2, 8, 9, 12, 3]  # [CLS] people in good [SEP] in the tiny vocabulary


@pytest.mark.parametrize("arch", ["bert", "roberta", "gpt2", "llama", "gemma3"])
def test_no_rotation_leaves_the_logits_unchanged(arch, tok):
    base = tiny_model(arch, len(tok), seed=1)
    model = copy.deepcopy(base)
    kind = "masked" if arch in ("bert", "roberta") else "causal"
    al.insert_alignment(model, kind, None)
    torch.testing.assert_close(_logits(model, IDS), _logits(base, IDS))


def test_masked_insertion_puts_w_at_the_mlm_heads_input(bert):
    W = al.random_orthogonal(16, seed=0)
    model = _copy(bert)
    al.insert_alignment(model, "masked", W)
    with torch.no_grad():
        h = bert.model.bert(torch.tensor([IDS])).last_hidden_state
        expected = bert.model.cls(h @ torch.tensor(W, dtype=torch.float32).T)
    torch.testing.assert_close(_logits(model, IDS), expected)
    assert not torch.allclose(_logits(model, IDS), _logits(bert.model, IDS))


@pytest.mark.parametrize("arch", ["bert", "gpt2", "llama"])
def test_a_head_that_absorbs_w_transposed_restores_the_model(arch, tok):
    # The module notes' caveat: the first head layer can undo an orthogonal W exactly.
    base = tiny_model(arch, len(tok), seed=2)
    kind = "masked" if arch == "bert" else "causal"
    W = torch.tensor(al.random_orthogonal(16, seed=5), dtype=torch.float32)
    model = copy.deepcopy(base)
    al.insert_alignment(model, kind, W.numpy())
    with torch.no_grad():
        if kind == "masked":
            dense = model.cls.predictions.transform.dense[1]
            dense.weight.copy_(dense.weight @ W.T)
        else:
            body = model.base_model
            affine = (body.norm if arch == "llama" else body.ln_f)[2]
            affine.weight.copy_(W.T)
    torch.testing.assert_close(_logits(model, IDS), _logits(base, IDS), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("arch, expected", [
    ("bert", ["cls.predictions.bias", "cls.predictions.transform.LayerNorm.bias",
              "cls.predictions.transform.LayerNorm.weight",
              "cls.predictions.transform.dense.1.bias",
              "cls.predictions.transform.dense.1.weight"]),
    ("gpt2", ["transformer.ln_f.2.bias", "transformer.ln_f.2.weight"]),  # tied output matrix
    ("llama", ["lm_head.weight", "model.norm.2.bias", "model.norm.2.weight"]),  # untied
])
def test_only_the_heads_own_parameters_train(arch, expected, tok):
    model = tiny_model(arch, len(tok), seed=0)
    names = al.insert_alignment(model, "masked" if arch == "bert" else "causal",
                                al.random_orthogonal(16))
    assert sorted(names) == expected
    assert sorted(n for n, p in model.named_parameters() if p.requires_grad) == expected


def test_insert_alignment_checks_the_width(bert):
    with pytest.raises(ValueError, match="16 x 16"):
        al.insert_alignment(_copy(bert), "masked", np.eye(8))


def test_mask_tokens_masks_every_non_special_token_at_probability_one():
    inputs, labels = objectives.mask_tokens([2, 7, 8, 9, 3], np.random.default_rng(0),
                                            mask_id=4, vocab_size=10, specials={2, 3},
                                            probability=1.0)
    assert labels == [objectives.IGNORE, 7, 8, 9, objectives.IGNORE]
    assert inputs[0] == 2 and inputs[-1] == 3
    rng = np.random.default_rng(1)
    chosen = [objectives.mask_tokens(list(range(5, 105)), rng, mask_id=4, vocab_size=200,
                                     specials=set())[1] for _ in range(50)]
    rate = np.mean([[label != objectives.IGNORE for label in row] for row in chosen])
    assert 0.12 < rate < 0.18


# ------------------------------------------------------------------------ head fine-tuning

TEXTS = ["people in paris are kind .", "the cat is good .", "a dog was bad .",
         "people in london are very kind .", "the man is smart and quick .",
         "the woman was very good ."] * 4


@pytest.mark.parametrize("model_fixture", ["bert", "gpt2"])
def test_head_finetuning_changes_only_the_head_and_lowers_the_loss(model_fixture, request,
                                                                   private_cache):
    lm = request.getfixturevalue(model_fixture)
    base = {k: v.clone() for k, v in lm.model.state_dict().items()}
    W = al.random_orthogonal(16, seed=0)
    start = _copy(lm)
    al.insert_alignment(start, lm.kind, W)
    run = al.finetune_head(lm, TEXTS, W=W, epochs=6, lr=3e-2, batch_size=8, progress=False)
    assert run.losses[-1] < run.losses[0]
    for k, v in lm.model.state_dict().items():  # the base model is untouched
        torch.testing.assert_close(v, base[k])
    trained, initial = run.lm.model.state_dict(), start.state_dict()
    changed = {k for k, v in trained.items() if not torch.equal(v, initial[k])}
    params = dict(run.lm.model.named_parameters())
    head = {params[n].data_ptr() for n in run.trainable}
    assert set(run.trainable) <= changed  # BERT's output bias also shows as decoder.bias
    assert {trained[k].data_ptr() for k in changed} == head
    assert run.lm.fingerprint != lm.fingerprint


def test_head_finetuning_lowers_the_held_out_free_training_loss_of_a_causal_lm(gpt2):
    W = al.random_orthogonal(16, seed=1)
    start = al.finetune_head(gpt2, TEXTS, W=W, epochs=0, cache=False, progress=False)
    end = al.finetune_head(gpt2, TEXTS, W=W, epochs=5, lr=3e-2, batch_size=8, cache=False,
                           progress=False)

    def loss(lm):
        seqs = objectives.training_sequences(lm, TEXTS)
        return sum(float(objectives.summed_loss(lm, lm.model, [(s, s)])) for s in seqs)

    assert loss(end.lm) < loss(start.lm)


def test_head_finetuning_resumes_after_an_interruption_and_reuses_a_finished_run(
        gpt2, private_cache, monkeypatch):
    recipe = dict(W=al.random_orthogonal(16, seed=2), epochs=3, lr=1e-2, batch_size=8,
                  progress=False)
    fresh = al.finetune_head(gpt2, TEXTS, cache=False, **recipe)
    real_record, calls = objectives.TokenLoss.record, []

    def crash_on_third(self, epoch, outputs):
        calls.append(epoch)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_record(self, epoch, outputs)

    monkeypatch.setattr(objectives.TokenLoss, "record", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        al.finetune_head(gpt2, TEXTS, **recipe)
    resumed = al.finetune_head(gpt2, TEXTS, **recipe)  # runs the third epoch only
    assert calls == [1, 2, 3, 3]
    assert resumed.losses == fresh.losses
    assert resumed.lm.fingerprint == fresh.lm.fingerprint
    monkeypatch.setattr(al, "fit", lambda *a, **k: pytest.fail("retrained"))
    again = al.finetune_head(gpt2, TEXTS, **recipe)
    assert again.lm.fingerprint == fresh.lm.fingerprint and again.losses == fresh.losses
    assert sorted(p.name for p in again.folder.iterdir()) == ["result"]  # no state left


def test_derived_fingerprint_tracks_w_and_the_head(gpt2):
    runs = [al.finetune_head(gpt2, TEXTS[:8], W=W, epochs=1, lr=1e-2, cache=False,
                             progress=False)
            for W in (al.random_orthogonal(16, seed=1), al.random_orthogonal(16, seed=1),
                      al.random_orthogonal(16, seed=2), None)]
    prints = [r.lm.fingerprint for r in runs]
    assert prints[0] == prints[1] and len(set(prints)) == 3
    head = runs[0].lm.model.transformer.ln_f[2]
    with torch.no_grad():
        head.bias.add_(1.0)
    assert al.derived_fingerprint(gpt2, runs[0].lm.model, runs[0].trainable) != prints[0]


def test_head_finetuning_rejects_an_empty_corpus(gpt2):
    with pytest.raises(ValueError, match="no training text"):
        al.finetune_head(gpt2, ["  "], cache=False, progress=False)


def test_a_damaged_finished_head_is_set_aside_and_trained_again(gpt2, private_cache):
    from biasbook import store

    recipe = dict(W=al.random_orthogonal(16, seed=3), epochs=1, lr=1e-2, batch_size=8,
                  progress=False)
    first = al.finetune_head(gpt2, TEXTS, **recipe)
    head = first.folder / "result" / "head.safetensors"
    head.write_bytes(head.read_bytes()[:40])
    with pytest.warns(store.DamagedCacheWarning, match="moved aside"):
        again = al.finetune_head(gpt2, TEXTS, **recipe)
    assert again.lm.fingerprint == first.lm.fingerprint and again.losses == first.losses
    assert (first.folder / "result.damaged").is_dir()
