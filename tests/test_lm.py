"""LSTM LM and bias regulariser against closed forms and independent numpy computations."""

import dataclasses
import math

import numpy as np
import pytest
import torch

from biasbook.mitigation.subspace import BiasRegularizer, choose_k, gender_subspace
from biasbook.training.lstm import (
    LMConfig,
    LSTMLanguageModel,
    Vocab,
    batchify,
    generate,
    perplexity,
    resolve_device,
    sample_categorical,
    train_lm,
)

TINY = LMConfig(
    layers=2,
    hidden=16,
    emb=8,
    dropout=0.0,
    bptt=6,
    batch=4,
    lr=0.05,
    optimizer="adam",
    epochs=6,
    seed=3,
)
TEXT = ("he is a doctor <eos> she is a nurse <eos> the cat sat on the mat <eos> " * 12).split()


def matrix_with_singular_values(values, shape, seed=0):
    """U diag(values) V^T with random orthonormal U, V."""
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rng.normal(size=(shape[0], len(values))))
    v, _ = np.linalg.qr(rng.normal(size=(shape[1], len(values))))
    return u @ np.diag(values) @ v.T


def test_tiny_model_loss_decreases():
    vocab = Vocab.build(TEXT)
    model = LSTMLanguageModel(len(vocab), TINY)
    history = train_lm(model, vocab.encode(TEXT), TINY, progress=False)
    losses = [h["train_loss"] for h in history]
    assert losses[-1] < 0.6 * losses[0]
    assert all(h["bias_loss"] == 0 for h in history)


def test_training_with_regulariser_is_finite_and_reproducible():
    vocab = Vocab.build(TEXT)
    reg = BiasRegularizer.from_vocab(vocab, [("he", "she"), ("doctor", "nurse")], lam=0.5)
    runs = []
    for _ in range(2):
        model = LSTMLanguageModel(len(vocab), TINY)
        runs.append(train_lm(model, vocab.encode(TEXT), TINY, regularizer=reg, progress=False))
    assert runs[0] == runs[1]
    assert all(math.isfinite(h["train_loss"] + h["bias_loss"]) for h in runs[0])
    assert runs[0][-1]["bias_loss"] < runs[0][0]["bias_loss"]


def test_regulariser_closed_form():
    # pairs (0,1), (2,3): C = [[3,0,0],[0,1,0]] -> shares 9/10, 1/10 -> k = 1, B = +-e1
    w = torch.tensor([[3.0, 0, 0], [-3, 0, 0], [0, 1, 0], [0, -1, 0], [2, 5, 7], [-1, 4, 0]])
    reg = BiasRegularizer(torch.tensor([[0, 1], [2, 3]]), torch.tensor([4, 5]), lam=0.1)
    assert reg(w).item() == pytest.approx(0.1 * (2**2 + 1**2))
    # 95% needs both directions: B spans e1, e2
    reg95 = BiasRegularizer(reg.pair_ids, reg.neutral_ids, lam=0.1, var_ratio=0.95)
    assert reg95(w).item() == pytest.approx(0.1 * (4 + 25 + 1 + 16))


def test_regulariser_matches_numpy():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(12, 6))
    pairs, neutral, lam = np.array([[0, 1], [2, 3], [4, 5], [6, 7]]), np.arange(8, 12), 0.3
    c = (w[pairs[:, 0]] - w[pairs[:, 1]]) / 2
    _, s, vt = np.linalg.svd(c, full_matrices=False)
    k = int(np.searchsorted(np.cumsum(s**2) / np.sum(s**2), 0.5)) + 1
    expected = lam * np.sum((w[neutral] @ vt[:k].T) ** 2)
    reg = BiasRegularizer(torch.tensor(pairs), torch.tensor(neutral), lam=lam)
    assert reg(torch.tensor(w)).item() == pytest.approx(expected)
    # swapping a pair's order flips a row of C: same subspace, same loss
    swapped = BiasRegularizer(torch.tensor(pairs[:, ::-1].copy()), torch.tensor(neutral), lam=lam)
    assert swapped(torch.tensor(w)).item() == pytest.approx(expected)


def test_as_coded_regulariser_normalises_rows_and_uses_k1():
    rng = np.random.default_rng(2)
    w = rng.normal(size=(10, 5))
    pairs, neutral = np.array([[0, 1], [2, 3], [4, 5]]), np.arange(6, 10)
    wn = w / np.linalg.norm(w, axis=1, keepdims=True)
    _, _, vt = np.linalg.svd((wn[pairs[:, 0]] - wn[pairs[:, 1]]) / 2, full_matrices=False)
    expected = np.sum((wn[neutral] @ vt[:1].T) ** 2)
    reg = BiasRegularizer(
        torch.tensor(pairs), torch.tensor(neutral), 1.0, var_ratio=0.99, mode="as-coded"
    )
    assert reg(torch.tensor(w)).item() == pytest.approx(expected)


def test_choose_k_on_known_singular_values():
    values = [4.0, 3.0, 2.0, 1.0]  # variance shares 16/30, 9/30, 4/30, 1/30
    m = torch.tensor(matrix_with_singular_values(values, (6, 9)))
    s = torch.linalg.svdvals(m)
    assert s.tolist() == pytest.approx(values + [0.0, 0.0], abs=1e-9)
    assert [choose_k(s, r) for r in (0.5, 0.54, 0.8, 0.9, 1.0)] == [1, 2, 2, 3, 4]
    assert [choose_k(s, r, mode="as-coded") for r in (0.5, 0.9, 1.0)] == [1, 1, 1]
    b = gender_subspace(m, torch.tensor([[0, 1], [2, 3], [4, 5]]), 0.5)
    assert b.shape == (9, 1)
    with pytest.raises(ValueError, match="var_ratio"):
        choose_k(s, 0.0)


def test_regulariser_bad_input():
    vocab = Vocab.build(TEXT)
    with pytest.raises(ValueError, match="no defining pair"):
        BiasRegularizer.from_vocab(vocab, [("king", "queen")], lam=1.0)
    with pytest.raises(ValueError, match="mode"):
        BiasRegularizer(torch.tensor([[0, 1]]), torch.tensor([2]), 1.0, mode="paper-ish")
    reg = BiasRegularizer.from_vocab(vocab, [("he", "she"), ("king", "queen")], lam=1.0)
    assert reg.pair_ids.tolist() == [[vocab.stoi["he"], vocab.stoi["she"]]]
    assert len(reg.neutral_ids) == len(vocab) - 2


def test_perplexity_of_uniform_model_is_vocab_size():
    vocab = Vocab.build(TEXT)
    model = LSTMLanguageModel(len(vocab), TINY)
    with torch.no_grad():
        model.encoder.weight.zero_()  # tied: decoder weights are zero too, logits = bias = 0
    assert perplexity(model, vocab.encode(TEXT), batch=2, bptt=5) == pytest.approx(len(vocab))


def test_generation_is_reproducible():
    vocab = Vocab.build(TEXT)
    model = LSTMLanguageModel(len(vocab), TINY)
    a = generate(model, vocab, n_seeds=3, length=7, seed=5)
    assert a == generate(model, vocab, n_seeds=3, length=7, seed=5)
    assert a != generate(model, vocab, n_seeds=3, length=7, seed=6)
    assert len(a) == 3 and all(len(t) == 7 and set(t) <= set(vocab.itos) for t in a)
    with pytest.raises(ValueError, match="temperature"):
        generate(model, vocab, n_seeds=1, length=1, temperature=0)


def test_low_temperature_generation_is_greedy():
    vocab = Vocab.build(TEXT)
    model = LSTMLanguageModel(len(vocab), TINY)
    with torch.no_grad():
        model.decoder.bias.fill_(-50.0)
        model.decoder.bias[vocab.stoi["cat"]] = 50.0
    texts = generate(model, vocab, n_seeds=2, length=4, temperature=0.01, seed=0)
    assert texts == [["cat"] * 4] * 2


def test_vocab_and_batchify():
    vocab = Vocab.build(["b", "a", "b", "c", "<unk>"], max_size=3)
    assert vocab.itos == ["<unk>", "<eos>", "b"]
    assert vocab.encode(["a", "b"]).tolist() == [0, 2]
    assert batchify(torch.arange(10), 3).tolist() == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    with pytest.raises(ValueError, match="too few"):
        batchify(torch.arange(3), 2)


def test_untied_debiasing_acts_on_the_chosen_embeddings_only():
    vocab = Vocab.build(TEXT)
    reg = BiasRegularizer.from_vocab(vocab, [("he", "she"), ("doctor", "nurse")], lam=1.0)
    untied = dataclasses.replace(TINY, tied=False)
    grads = {}
    for which in ("input", "output", "both"):
        model = LSTMLanguageModel(len(vocab), untied)
        sum(reg(w) for w in model.debiased(which)).backward()
        grads[which] = [p.grad is not None and bool(p.grad.abs().sum() > 0)
                        for p in (model.encoder.weight, model.decoder.weight)]
    assert grads == {"input": [True, False], "output": [False, True], "both": [True, True]}
    tied = LSTMLanguageModel(len(vocab), TINY)  # one matrix: the input penalty reaches the output
    reg(tied.debiased("input")[0]).backward()
    assert tied.decoder.weight.grad is not None and tied.decoder.weight.grad.abs().sum() > 0


def test_input_only_training_leaves_the_untied_output_embedding_unregularised():
    vocab = Vocab.build(TEXT)
    probe = BiasRegularizer.from_vocab(vocab, [("he", "she"), ("doctor", "nurse")], lam=1.0,
                                       mode="as-coded")
    reg = BiasRegularizer.from_vocab(vocab, [("he", "she"), ("doctor", "nurse")], lam=10.0,
                                     mode="as-coded")
    cos2 = {}
    for which in ("input", "output"):
        config = dataclasses.replace(TINY, tied=False, debias=which)
        model = LSTMLanguageModel(len(vocab), config)
        before = [float(probe(w.detach())) for w in (model.encoder.weight, model.decoder.weight)]
        train_lm(model, vocab.encode(TEXT), config, regularizer=reg, progress=False)
        after = [float(probe(w.detach())) for w in (model.encoder.weight, model.decoder.weight)]
        cos2[which] = before, after
    (in_before, out_before), (in_after, out_after) = cos2["input"]
    assert in_after < 0.01 * in_before and out_after > 0.3 * out_before
    (in_before, out_before), (in_after, out_after) = cos2["output"]
    assert out_after < 0.01 * out_before and in_after > 0.3 * in_before


def test_an_interrupted_training_resumes_to_the_uninterrupted_weights(tmp_path, monkeypatch):
    from biasbook import store
    from biasbook.training import lstm

    vocab = Vocab.build(TEXT)
    config = dataclasses.replace(TINY, dropout=0.3, epochs=4)  # dropout: random state matters
    reg = BiasRegularizer.from_vocab(vocab, [("he", "she"), ("doctor", "nurse")], lam=0.5)

    def run(folder):
        model = LSTMLanguageModel(len(vocab), config)
        history = train_lm(model, vocab.encode(TEXT), config, regularizer=reg,
                           valid_ids=vocab.encode(TEXT[:60]),
                           checkpoint=store.Checkpoint(tmp_path / folder), progress=False)
        return model, history

    whole, whole_history = run("whole")
    real_record = lstm._TruncatedBPTT.record

    def crash_in_epoch_three(self, epoch, losses):
        if epoch == 3:
            raise KeyboardInterrupt
        return real_record(self, epoch, losses)

    monkeypatch.setattr(lstm._TruncatedBPTT, "record", crash_in_epoch_three)
    with pytest.raises(KeyboardInterrupt):
        run("interrupted")
    monkeypatch.setattr(lstm._TruncatedBPTT, "record", real_record)
    resumed, history = run("interrupted")
    assert history == whole_history and [h["epoch"] for h in history] == [1, 2, 3, 4]
    for key, value in whole.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[key]), key


def test_tying_and_debias_choices_are_checked():
    with pytest.raises(ValueError, match="tied=False"):
        LMConfig(debias="output")
    with pytest.raises(ValueError, match="debias must be"):
        LMConfig(tied=False, debias="decoder")
    vocab = Vocab.build(TEXT)
    model = LSTMLanguageModel(len(vocab), TINY)
    with pytest.raises(ValueError, match="untied|tied"):
        train_lm(model, vocab.encode(TEXT), dataclasses.replace(TINY, tied=False),
                 progress=False)


def test_sample_categorical_matches_softmax():
    logits = torch.tensor([2.0, 0.0, -math.inf, 1.0, -1.0])
    for temperature in (1.0, 0.5):
        expected = np.exp(np.array([2.0, 0.0, -np.inf, 1.0, -1.0]) / temperature)
        expected /= expected.sum()
        n = 200_000
        g = torch.Generator().manual_seed(1)
        draws = sample_categorical(logits.expand(n, 5), temperature, g)
        freq = np.bincount(draws.numpy(), minlength=5) / n
        se = np.sqrt(expected * (1 - expected) / n)
        assert freq[2] == 0  # probability 0: never drawn
        assert np.all(np.abs(freq - expected) <= 5 * se + 1e-12)


def test_model_follows_its_device_on_cpu():
    vocab = Vocab.build(TEXT)
    model = LSTMLanguageModel(len(vocab), TINY).to(resolve_device("cpu"))
    assert model.device == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_lm(model, vocab.encode(TEXT), dataclasses.replace(TINY, epochs=1), progress=False)
    assert math.isfinite(perplexity(model, vocab.encode(TEXT), batch=2, bptt=5))
    assert len(generate(model, vocab, n_seeds=2, length=3)) == 2
