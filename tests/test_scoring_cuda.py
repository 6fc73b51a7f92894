"""The scoring engine on a GPU gives the CPU's numbers. Skipped without CUDA (CI has none); run on
a GPU machine with ``pytest tests/test_scoring_cuda.py``. It found the shared-prefix path
concatenating a CPU mask with a CUDA one."""

import copy

import numpy as np
import pytest
import torch

from biasbook import models, testing
from biasbook.scoring import score_sentences, slot_probabilities

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

# shared prefixes of different lengths, so that the grouped path pads and masks them
SENTENCES = ["the doctor is here .", "the doctor is not here .", "the nurse is here .",
             "a nurse said that the doctor is here .", "a nurse said hello ."]


@pytest.mark.parametrize("arch", ["gpt2", "llama", "gemma3", "bert"])
def test_gpu_scores_equal_cpu_scores(arch):
    tok = testing.tiny_tokenizer(spell=True)
    model = testing.tiny_model(arch, len(tok))
    on = {"cpu": models.from_model(model, tok, name=f"tiny-{arch}"),
          "cuda": models.from_model(copy.deepcopy(model).to("cuda"), tok, name=f"tiny-{arch}")}
    cpu, gpu = (score_sentences(on[d], SENTENCES, cache=False, progress=False) for d in on)
    np.testing.assert_allclose(gpu.mean, cpu.mean, rtol=1e-4, atol=1e-4)
    cpu, gpu = (slot_probabilities(on[d], ["the {} is here .", "a nurse said the {} is here ."],
                                   ["doctor", "nurse"], log=True, cache=False, progress=False)
                for d in on)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-4)
