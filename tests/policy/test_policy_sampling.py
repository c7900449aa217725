"""Vision placeholders are never sampled: a sampled <|image_pad|> spliced into the history would claim
an image the prompt does not have and break the next forward pass."""
import math

import torch

from weblica.policy.backends.base import SamplingOptions
from weblica.policy.backends.hf import mask_banned, sample_token


def test_banned_ids_are_never_sampled_and_logprobs_renormalize():
    logits = torch.tensor([0.0, 0.0, 50.0, 0.0])  # id 2 (a vision token) would win almost always
    masked = mask_banned(logits, [2])
    generator = torch.Generator().manual_seed(0)
    tokens = {sample_token(masked, SamplingOptions(temperature=1.5), generator)[0] for _ in range(200)}
    assert 2 not in tokens and tokens <= {0, 1, 3}
    token, logprob = sample_token(masked, SamplingOptions(temperature=1.0), generator)
    assert math.isclose(logprob, math.log(1 / 3), rel_tol=1e-5)
    assert torch.equal(mask_banned(logits, []), logits) and logits[2] == 50.0  # the input is not modified
