"""Tiny tokenizers and random-init models built from configs, for tests and docstring examples.

No download is needed: the vocabulary is written here, and the models are built from small configs.
The vocabulary has whole words and WordPiece pieces (``un ##believ ##able``), so that multi-token
words exercise the same code paths as with a real tokenizer. :func:`stand_in` saves a tiny model of
a hub model's kind to a folder, for ``biasbook run --stand-in`` (a wiring check of a paper profile).
"""

from __future__ import annotations

from pathlib import Path

import torch

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[BOS]"]
WORDS = ["a", "the", "cat", "dog", "is", "was", "people", "in", "are", "very", "good", "bad",
         "kind", "lazy", "he", "she", "man", "woman", "paris", "london", "tokyo", ".", ",", "and",
         "un", "##believ", "##able", "##s", "##ly", "smart", "quick"]


def tiny_tokenizer(spell: bool = False, alphabet: str = ""):
    """A BERT-style WordPiece tokenizer over :data:`WORDS`, with ``[BOS]`` as its bos token.

    ``spell=True`` adds every letter and digit, alone and as a ``##`` continuation, so that any
    text (a region's name, a review) becomes real tokens rather than ``[UNK]``; ``alphabet`` adds
    the characters of a text in other scripts the same way (as the tokenizer normalises them:
    lower case, accents stripped, Hangul split into jamo):

    >>> tiny_tokenizer(spell=True).tokenize("Paris, Kenya")
    ['paris', ',', 'k', '##e', '##n', '##y', '##a']
    >>> tiny_tokenizer(spell=True, alphabet="Αθήνα").tokenize("Αθήνα")
    ['α', '##θ', '##η', '##ν', '##α']
    """
    from transformers import BertTokenizerFast

    chars = [*"abcdefghijklmnopqrstuvwxyz0123456789", "'", "-", "(", ")", "!", "?", ":"]
    if alphabet:
        plain = BertTokenizerFast(vocab={t: i for i, t in enumerate(SPECIALS)},
                                  do_lower_case=True)
        normal = plain.backend_tokenizer.normalizer.normalize_str(alphabet)
        chars += sorted({c for c in normal if not c.isspace()})
    extra = [*chars, *(f"##{c}" for c in chars)] if spell or alphabet else []
    tokens = list(dict.fromkeys(SPECIALS + WORDS + extra))
    return BertTokenizerFast(vocab={t: i for i, t in enumerate(tokens)}, do_lower_case=True,
                             bos_token="[BOS]")


def tiny_model(arch: str, vocab_size: int, seed: int = 0, positions: int = 64
               ) -> torch.nn.Module:
    """A random-init model of a given architecture family with a tiny config.

    ``arch`` is one of ``bert, albert, roberta, distilbert, bart, gpt2, llama, mistral, gemma3``;
    ``positions`` is the longest input it takes.
    """
    import transformers as tf

    torch.manual_seed(seed)
    small = dict(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2,
                 num_attention_heads=2, intermediate_size=32, max_position_embeddings=positions)
    causal = dict(num_key_value_heads=1, head_dim=8, bos_token_id=5, eos_token_id=3,
                  pad_token_id=0, **small)
    configs = {
        "bert": lambda: tf.BertForMaskedLM(tf.BertConfig(**small)),
        "albert": lambda: tf.AlbertForMaskedLM(tf.AlbertConfig(embedding_size=8, **small)),
        "roberta": lambda: tf.RobertaForMaskedLM(tf.RobertaConfig(  # positions from pad + 1
            **{**small, "max_position_embeddings": positions + 6}, pad_token_id=0)),
        "distilbert": lambda: tf.DistilBertForMaskedLM(tf.DistilBertConfig(
            vocab_size=vocab_size, dim=16, n_layers=2, n_heads=2, hidden_dim=32,
            max_position_embeddings=positions)),
        "bart": lambda: tf.BartForConditionalGeneration(tf.BartConfig(
            vocab_size=vocab_size, d_model=16, encoder_layers=1, decoder_layers=1,
            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
            decoder_ffn_dim=32, max_position_embeddings=positions, pad_token_id=0,
            bos_token_id=5, eos_token_id=3, decoder_start_token_id=3, forced_eos_token_id=None)),
        "gpt2": lambda: tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=vocab_size, n_embd=16, n_layer=2, n_head=2, n_positions=positions,
            bos_token_id=5, eos_token_id=5)),
        "llama": lambda: tf.LlamaForCausalLM(tf.LlamaConfig(**causal)),
        "mistral": lambda: tf.MistralForCausalLM(tf.MistralConfig(**causal)),
        "gemma3": lambda: tf.Gemma3ForCausalLM(tf.Gemma3TextConfig(sliding_window=8, **causal)),
    }
    if arch not in configs:
        raise ValueError(f"unknown tiny architecture {arch!r}; choose from {sorted(configs)}")
    return configs[arch]().eval()


#: A chat template for stand-ins of chat models: the messages in order, then the answer's cue.
CHAT_TEMPLATE = ("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}[assistant]{% endif %}")


def stand_in(hub_id: str, folder: str | Path, *, alphabet: str = "", seed: int = 0) -> Path:
    """Save a tiny random-init model of ``hub_id``'s kind and architecture family (from
    :data:`biasbook.plan.KNOWN_MODELS`) with a spelling tokenizer (``alphabet``: characters of
    other scripts it must spell, see :func:`tiny_tokenizer`) to ``folder``, for
    ``biasbook run --stand-in hub_id=folder``. A chat model's stand-in gets a chat template.
    Its 512 positions take the paper profiles' longest inputs.

    >>> import tempfile
    >>> folder = stand_in("albert-base-v2", tempfile.mkdtemp())
    >>> from biasbook.models import load
    >>> load(str(folder), device="cpu").kind
    'masked'
    """
    from biasbook.plan import KNOWN_MODELS

    if hub_id not in KNOWN_MODELS:
        raise ValueError(f"no stand-in for {hub_id!r}: its kind is not known; known: "
                         f"{', '.join(KNOWN_MODELS)}")
    size = KNOWN_MODELS[hub_id]
    tok = tiny_tokenizer(spell=True, alphabet=alphabet)
    if size.kind == "causal" and any(w in hub_id.lower() for w in ("chat", "instruct")):
        tok.chat_template = CHAT_TEMPLATE
    folder = Path(folder)
    tiny_model(size.arch, len(tok), seed=seed, positions=512).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
