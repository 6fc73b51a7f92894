"""The scoring engine on the two offline pretrained models (slow: loads real weights)."""

import numpy as np
import pytest
import torch

from biasbook import models
from biasbook.scoring import score_sentences, slot_probabilities

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["smollm2-135m", "gemma-3-270m"])
def lm(request):
    return models.load(request.param)


def test_a_grammatical_sentence_scores_higher_than_its_scrambled_version(lm):
    pairs = [("The cat sat on the mat.", "Mat the on sat cat the."),
             ("People in France are friendly.", "Friendly are France in people."),
             ("She went to the market to buy bread.", "Bread buy to market the to went she.")]
    scores = score_sentences(lm, [s for pair in pairs for s in pair], cache=False)
    assert all(scores.mean[0::2] > scores.mean[1::2]), scores.to_frame()


@torch.inference_mode()
def test_the_engine_equals_a_plain_forward_pass_on_a_real_model(lm):
    sentences = [f"People in {r} are {d}." for r in ("France", "Papua New Guinea")
                 for d in ("smart", "hard-working", "narrow-minded", "kind")]
    scores = score_sentences(lm, sentences, cache=False)
    for sentence, got in zip(sentences, scores.token_logprobs, strict=True):
        x = torch.tensor([[*lm.prefix_ids, *lm.encode(sentence)]])
        logp = torch.log_softmax(lm.model(input_ids=x).logits[0, :-1].double(), dim=-1)
        np.testing.assert_allclose(got, logp.gather(1, x[0, 1:, None])[:, 0].numpy(), atol=1e-4)


def test_slot_probabilities_prefer_the_right_capital(lm):
    p = slot_probabilities(lm, "The capital of France is {}.", ["Paris", "Tokyo", "Lima"],
                           cache=False)
    assert p.argmax() == 0 and p.sum() == pytest.approx(1)
