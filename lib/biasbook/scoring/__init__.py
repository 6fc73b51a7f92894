"""The scoring engine: sentence log-likelihoods and slot probabilities, batched and cached.

- :func:`score_sentences` -- per-token log-probabilities and their mean / sum by a named method:
  ``aul``, ``aula``, ``pll`` (masked LMs), ``clm`` (causal LMs), ``infill`` (encoder-decoder);
  definitions in :mod:`biasbook.scoring.sentences`.
- :func:`score_stream` -- the same for an iterable of any length, chunk by chunk, in constant
  memory (HERB's paper setting: millions of sentences per model).
- :func:`slot_probabilities` -- probability of each candidate in a template's ``{}`` slot
  (whole-word masking for masked LMs, candidate-normalised sentence probability for causal LMs);
  definitions in :mod:`biasbook.scoring.slots`.

Speed without changing a score: batches are bucketed by length under a token budget and padded on
the right with attention masks, so padding never reaches a scored token; logits are normalised only
where a token is scored (logsumexp and gather, in chunks); causal sentences sharing a token prefix
run it once and reuse its key/value cache. Scores persist by (model fingerprint, method, query) in
``cache_dir()/scores`` (:class:`ScoreCache`), batch by batch. The fingerprint is taken when a model
is loaded: after training or editing its weights in place, call ``lm.refresh_fingerprint()`` (the
cache's cheap probe catches most such changes and recomputes it, with a warning).

All three take ``workers=``: the same engines, sharded over Ray workers (a number, or a cluster's
address), writing into the same cache (:mod:`biasbook.scoring.distributed`, the optional extra
``biasbook[ray]``); the default scores in this process.

>>> from biasbook.models import from_model
>>> from biasbook.testing import tiny_model, tiny_tokenizer
>>> tok = tiny_tokenizer()
>>> bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
>>> s = score_sentences(bert, ["people in paris are kind ."], cache=False)
>>> s.method, int(s.n_tokens[0]), bool(s.mean[0] < 0)
('aul', 6, True)
"""

from biasbook.scoring.cache import ScoreCache
from biasbook.scoring.sentences import METHODS, SentenceScores, score_sentences, score_stream
from biasbook.scoring.slots import slot_probabilities

__all__ = ["METHODS", "ScoreCache", "SentenceScores", "score_sentences", "score_stream",
           "slot_probabilities"]
