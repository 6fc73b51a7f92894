"""What the lambda sweep of notebook 02 is asked to do: its parameters, corpus by corpus.

Values of the per-corpus settings (:data:`PER_CORPUS`) may be one value for every corpus or a
mapping ``{corpus: value}`` (:func:`per_corpus`); :class:`Settings` resolves them on use.

>>> per_corpus({"ptb": [0.0, 1.0]}, "ptb"), per_corpus(5000, "ptb")
([0.0, 1.0], 5000)
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from biasbook.training.lstm import LMConfig

PER_CORPUS = ("lambdas", "train_tokens", "valid_tokens", "vocab_size", "warmup_tokens",
              "sweep_tokens", "seeds")


def per_corpus(value, corpus: str):
    """``value[corpus]`` for a mapping ``{corpus: value}``, else ``value`` itself.

    Used in: lm-gender-bias/02, biasbook plan.
    """
    if isinstance(value, dict):
        if corpus not in value:
            raise KeyError(f"no value for corpus {corpus!r} in {value}")
        return value[corpus]
    return value


@dataclass(frozen=True)
class Settings:
    """The sweep's parameters (notebook 02's profile keys); see :data:`PER_CORPUS`.

    Used in: lm-gender-bias/02.
    """

    lambdas: list[float] | dict
    train_tokens: int | None | dict
    valid_tokens: int | None | dict
    un_train_speeches: int | None
    un_valid_speeches: int | None
    un_seed: int
    vocab_size: int | dict
    warmup_tokens: int | dict
    sweep_tokens: int | dict
    lstm: dict
    reg_mode: str
    generation: dict  # {"n_seeds": texts per lambda, "length": tokens per text}
    seeds: list[int] | dict  # training seeds: one warm-up and one lambda sweep each
    tying: dict | None  # {"corpus": ..., "lam": ...} for tying_runs, or None
    device: str = "cpu"

    def __post_init__(self):
        if sorted(self.generation) != ["length", "n_seeds"]:
            raise ValueError(f"generation must give n_seeds and length, got {self.generation}")
        for seeds in self.seeds.values() if isinstance(self.seeds, dict) else [self.seeds]:
            if not seeds or len(set(seeds)) != len(seeds):
                raise ValueError(f"seeds must be a non-empty list of distinct seeds, got {seeds}")
        if self.tying is not None and sorted(self.tying) != ["corpus", "lam"]:
            raise ValueError(f"tying must give corpus and lam (or be null), got {self.tying}")

    @property
    def n_seeds(self) -> int:
        return self.generation["n_seeds"]

    @property
    def gen_length(self) -> int:
        return self.generation["length"]

    @classmethod
    def from_params(cls, params: dict) -> Settings:
        """The settings among a notebook's resolved parameters (other keys are ignored)."""
        return cls(**{f.name: params[f.name] for f in fields(cls)})

    def value(self, key: str, corpus: str):
        """Setting ``key`` for ``corpus`` (per-corpus mappings resolved)."""
        value = getattr(self, key)
        return per_corpus(value, corpus) if key in PER_CORPUS else value

    def config(self, seed: int | None = None, **changes) -> LMConfig:
        """The LSTM's hyper-parameters (seed ``seed``, then ``changes`` such as ``tied``); one
        pass over each slice of the stream."""
        config = LMConfig(**{**self.lstm, **changes}, epochs=1)
        return config if seed is None else replace(config, seed=seed)
