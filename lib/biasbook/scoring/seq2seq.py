"""Teacher-forced token log-probabilities under an encoder-decoder LM (BART).

``log P(y_t | y_<t, encoder(x))`` for every non-special token of the decoder sequence ``y``. The
decoder input is ``y`` shifted right behind ``decoder_start_token_id``, as in training. Encoder
inputs are right-padded with an attention mask (so cross-attention never sees padding); decoder
inputs are right-padded without one (causal self-attention never looks ahead to it).

What ``x`` is decides what is measured (see :mod:`biasbook.scoring.sentences`): a lone
``<mask>`` for the ``infill`` likelihood, ``y`` itself for the HERB code's reconstruction, a
template with its slot masked for slot probabilities.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch

from biasbook.models import LanguageModel
from biasbook.scoring.batching import gather_logprobs, padded, token_batches
from biasbook.scoring.masked import pad_id


def seq2seq_logprobs(lm: LanguageModel, encoder_seqs: Sequence[Sequence[int]],
                     decoder_seqs: Sequence[Sequence[int]], batch_tokens: int
                     ) -> Iterator[tuple[list[int], list[np.ndarray]]]:
    """Yield ``(indices, token log-probs of decoder_seqs[i] given encoder_seqs[i])`` per batch."""
    start = lm.model.config.decoder_start_token_id
    specials = torch.tensor(sorted(lm.tokenizer.all_special_ids), device=lm.device)
    sizes = [max(len(e), len(d)) for e, d in zip(encoder_seqs, decoder_seqs, strict=True)]
    for batch in token_batches(sizes, batch_tokens):
        encoder, encoder_mask = padded([encoder_seqs[i] for i in batch], pad_id(lm), lm.device)
        targets, scored = padded([decoder_seqs[i] for i in batch], pad_id(lm), lm.device)
        decoder = torch.cat([torch.full_like(targets[:, :1], start), targets[:, :-1]], dim=1)
        out = lm.model(input_ids=encoder, attention_mask=encoder_mask, decoder_input_ids=decoder)
        scored = scored.bool() & ~torch.isin(targets, specials)
        logprobs = gather_logprobs(out.logits[scored], targets[scored])
        yield batch, [p.numpy() for p in torch.split(logprobs.cpu(), scored.sum(1).tolist())]
