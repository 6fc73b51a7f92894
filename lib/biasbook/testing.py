"""Tiny tokenizers and random-init models built from configs, for tests and docstring examples.

No download is needed: the vocabulary is written here, and the models are built from small configs.
The vocabulary has whole words and WordPiece pieces (``un ##believ ##able``), so that multi-token
words exercise the same code paths as with a real tokenizer.
"""

from __future__ import annotations

import torch

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[BOS]"]
WORDS = ["a", "the", "cat", "dog", "is", "was", "people", "in", "are", "very", "good", "bad",
         "kind", "lazy", "he", "she", "man", "woman", "paris", "london", "tokyo", ".", ",", "and",
         "un", "##believ", "##able", "##s", "##ly", "smart", "quick"]


def tiny_tokenizer(spell: bool = False):
    """A BERT-style WordPiece tokenizer over :data:`WORDS`, with ``[BOS]`` as its bos token.

    ``spell=True`` adds every letter and digit, alone and as a ``##`` continuation, so that any
    text (a region's name, a review) becomes real tokens rather than ``[UNK]``:

    >>> tiny_tokenizer(spell=True).tokenize("Paris, Kenya")
    ['paris', ',', 'k', '##e', '##n', '##y', '##a']
    """
    from transformers import BertTokenizerFast

    chars = [*"abcdefghijklmnopqrstuvwxyz0123456789", "'", "-", "(", ")", "!", "?", ":"]
    extra = [*chars, *(f"##{c}" for c in chars)] if spell else []
    tokens = list(dict.fromkeys(SPECIALS + WORDS + extra))
    return BertTokenizerFast(vocab={t: i for i, t in enumerate(tokens)}, do_lower_case=True,
                             bos_token="[BOS]")


def tiny_model(arch: str, vocab_size: int, seed: int = 0) -> torch.nn.Module:
    """A random-init model of a given architecture family with a tiny config.

    ``arch`` is one of ``bert, albert, roberta, distilbert, bart, gpt2, llama, gemma3``.
    """
    import transformers as tf

    torch.manual_seed(seed)
    small = dict(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2,
                 num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    configs = {
        "bert": lambda: tf.BertForMaskedLM(tf.BertConfig(**small)),
        "albert": lambda: tf.AlbertForMaskedLM(tf.AlbertConfig(embedding_size=8, **small)),
        "roberta": lambda: tf.RobertaForMaskedLM(tf.RobertaConfig(
            **{**small, "max_position_embeddings": 70}, pad_token_id=0)),
        "distilbert": lambda: tf.DistilBertForMaskedLM(tf.DistilBertConfig(
            vocab_size=vocab_size, dim=16, n_layers=2, n_heads=2, hidden_dim=32,
            max_position_embeddings=64)),
        "bart": lambda: tf.BartForConditionalGeneration(tf.BartConfig(
            vocab_size=vocab_size, d_model=16, encoder_layers=1, decoder_layers=1,
            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
            decoder_ffn_dim=32, max_position_embeddings=64, pad_token_id=0, bos_token_id=5,
            eos_token_id=3, decoder_start_token_id=3, forced_eos_token_id=None)),
        "gpt2": lambda: tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=vocab_size, n_embd=16, n_layer=2, n_head=2, n_positions=64,
            bos_token_id=5, eos_token_id=5)),
        "llama": lambda: tf.LlamaForCausalLM(tf.LlamaConfig(
            num_key_value_heads=1, head_dim=8, bos_token_id=5, eos_token_id=3, pad_token_id=0,
            **small)),
        "gemma3": lambda: tf.Gemma3ForCausalLM(tf.Gemma3TextConfig(
            num_key_value_heads=1, head_dim=8, bos_token_id=5, eos_token_id=3, pad_token_id=0,
            sliding_window=8, **small)),
    }
    if arch not in configs:
        raise ValueError(f"unknown tiny architecture {arch!r}; choose from {sorted(configs)}")
    return configs[arch]().eval()
