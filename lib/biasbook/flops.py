"""Floating-point operations of the book's engines that are not transformers, and this
machine's rate for each engine (:func:`measure`), for :mod:`biasbook.plan`'s estimates.

The rates come from a fraction of a second of a small random-init workload per engine: a
transformer layer as wide as BERT-base with its output head (every transformer kind), an LSTM,
GloVe, word2vec and co-occurrence counting, each counted by the formulas below.

>>> glove_flops(nonzeros=1000, dim=50, epochs=2)  # 12 x 50 per non-zero and epoch
1200000.0
"""

from __future__ import annotations

import timeit
from functools import cache


def lstm_flops_per_token(layers: int, hidden: int, emb: int, vocab: int) -> float:
    """Forward FLOPs per token of a word-level LSTM LM: four gates per layer, then the softmax
    over ``vocab`` from the ``emb``-sized output (tied embeddings)."""
    gates = sum(4 * hidden * ((emb if i == 0 else hidden) + hidden) for i in range(layers))
    return 2.0 * (gates + hidden * emb + emb * vocab)


def glove_flops(nonzeros: int, dim: int, epochs: int) -> float:
    """GloVe's FLOPs: per non-zero and epoch a dot product, two gradients and AdaGrad on two
    vectors, about 12 ``dim``."""
    return 12.0 * dim * nonzeros * epochs


def word2vec_flops(words: int, dim: int, window: int, epochs: int, negative: int = 5) -> float:
    """word2vec's FLOPs (gensim's defaults: negative sampling with 5 noise words): per word and
    epoch, each context pair updates ``negative + 1`` output vectors and one input vector."""
    return 6.0 * dim * window * (negative + 1) * words * epochs


def counting_flops(tokens: int, window: int) -> float:
    """A windowed co-occurrence count: ``2 window`` pair updates per token (one "FLOP" each)."""
    return 2.0 * window * tokens


def measure(engine: str) -> float:
    """This machine's rate for ``engine`` in FLOP/s (by the formulas above), from a fraction of a
    second of a small random-init workload; the best of two runs after a warm-up. A loaded
    machine measures slower, as it will run slower."""
    return _measured(PROBE[engine])


@cache
def _measured(probe: str) -> float:
    run, flops = _PROBES[probe]()
    return flops / min(timeit.repeat(run, number=1, repeat=3))


def _transformer_probe():
    # One BERT-base-wide layer and a 30k-word output head, from torch's own layers: the matrix
    # products of every transformer kind at the width of the paper's models (narrower ones use
    # a CPU several times less well), without importing transformers (seconds on a loaded
    # machine). Masked, causal and encoder-decoder models differ in masks, not in arithmetic.
    import torch

    torch.manual_seed(0)
    h, vocab, batch, length = 768, 30000, 4, 64
    body = torch.nn.TransformerEncoderLayer(h, 12, 4 * h, dropout=0.0, batch_first=True).eval()
    head = torch.nn.Linear(h, vocab)
    x = torch.randn(batch, length, h)

    def run():
        with torch.no_grad():
            head(body(x))

    return run, 2.0 * (12 * h * h + h * vocab) * batch * length


def _lstm_probe():
    import torch

    torch.manual_seed(0)
    layers, h, vocab, batch, bptt = 2, 512, 10000, 20, 35
    lstm, head = torch.nn.LSTM(h, h, layers), torch.nn.Linear(h, vocab)
    x = torch.randn(bptt, batch, h)

    def run():
        with torch.no_grad():
            head(lstm(x)[0])

    return run, lstm_flops_per_token(layers, h, h, vocab) * batch * bptt


def _glove_probe():
    import numpy as np
    import scipy.sparse as sp

    from biasbook.embeddings import glove

    n, dim = 2000, 50
    matrix = sp.random(n, n, density=0.02, random_state=0, format="csr") * 10
    vocab = [str(i) for i in range(n)]

    def run():
        glove.train(matrix, vocab, dim=dim, epochs=1, cache=False, progress=False)

    return run, glove_flops(int(np.count_nonzero(matrix.data)), dim, 1)


def _word2vec_probe():
    import numpy as np
    from gensim.models import Word2Vec

    rng = np.random.default_rng(0)
    sentences = [[str(w) for w in rng.integers(0, 2000, 20)] for _ in range(1000)]

    def run():
        Word2Vec(sentences, vector_size=100, window=5, min_count=1, epochs=1, workers=1, seed=0)

    return run, word2vec_flops(20_000, 100, 5, 1)


def _counting_probe():
    import numpy as np

    from biasbook.text.word_context import word_context_matrix

    rng = np.random.default_rng(0)
    sentences = [[str(w) for w in rng.zipf(1.3, 20) % 3000] for _ in range(1000)]

    def run():
        word_context_matrix(sentences, window=15, min_count=1)

    return run, counting_flops(20_000, 15)


_PROBES = {"transformer": _transformer_probe, "lstm": _lstm_probe, "glove": _glove_probe,
           "word2vec": _word2vec_probe, "counting": _counting_probe}
#: The probe that measures each engine's rate.
PROBE = {"masked": "transformer", "causal": "transformer", "encoder-decoder": "transformer",
         "encoder": "transformer", **{k: k for k in _PROBES}}
