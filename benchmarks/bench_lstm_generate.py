"""Benchmark: text generation of the LSTM language model, batched inverse-CDF sampling vs the loop
it replaced (softmax, then ``torch.multinomial`` every step), in the same run.

Both generate ``--seeds`` texts of ``--length`` tokens from one random-init model of the book
profile's size (2 x 64 LSTM, vocabulary 10,000), on one thread; the model's forward pass is the
same in both, so the ratio is what the sampler costs. Reported: seconds for each (best of
``--repeats``), tokens per second and the ratio.

    python benchmarks/bench_lstm_generate.py [--seeds 200] [--length 100] [--vocab 10000]
"""

from __future__ import annotations

import argparse

import torch
from timing import best_time

from biasbook.training.lstm import LMConfig, LSTMLanguageModel, Vocab, generate


def generate_multinomial(model, vocab, *, n_seeds, length, temperature=1.0, seed=0):
    """The previous :func:`biasbook.training.lstm.generate`: softmax + multinomial per step."""
    gen = torch.Generator().manual_seed(seed)
    model.eval()
    x = torch.randint(len(vocab), (1, n_seeds), generator=gen)
    hidden, out = model.init_hidden(n_seeds), []
    with torch.no_grad():
        for _ in range(length):
            logits, hidden = model(x, hidden)
            probs = torch.softmax(logits[-1] / temperature, dim=-1)
            x = torch.multinomial(probs, 1, generator=gen).t()
            out.append(x[0])
    return [vocab.decode(col) for col in torch.stack(out, 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--vocab", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    vocab = Vocab(["<unk>", "<eos>", *(f"w{i}" for i in range(args.vocab - 2))])
    model = LSTMLanguageModel(len(vocab), LMConfig(layers=2, hidden=64, emb=64, dropout=0.1))
    kwargs = {"n_seeds": args.seeds, "length": args.length}
    old, _ = best_time(lambda: generate_multinomial(model, vocab, **kwargs), args.repeats)
    new, _ = best_time(lambda: generate(model, vocab, **kwargs), args.repeats)
    tokens = args.seeds * args.length
    print(f"{args.seeds} texts x {args.length} tokens, vocabulary {args.vocab}, 1 thread, "
          f"best of {args.repeats}")
    print(f"softmax + multinomial loop: {old:7.2f} s  ({tokens / old:9.0f} tokens/s)")
    print(f"inverse-CDF sampling:       {new:7.2f} s  ({tokens / new:9.0f} tokens/s)")
    print(f"speed-up: {old / new:.1f}x")


if __name__ == "__main__":
    main()
