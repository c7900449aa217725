"""The TRL integration gathers the model as TRL itself does before its episodes (issue 40, point 4): under
FSDP2 the episodes sample from an unsharded replica holding the full weights, so two ranks that play
different numbers of turns do not wait on each other's all-gathers; under ZeRO-3, TRL's own
`unwrap_model_for_generation` gathers, and not gathering is refused. Two real gloo ranks on the CPU, the
tiny Qwen3-VL sharded with our FSDP2 layout; TRL's `DistributedBackend` reads a stand-in accelerator
state that names FSDP version 2 (accelerate's FSDP plugin needs a launch of its own)."""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

pytest.importorskip("trl", reason="TRL is in the `train` extra")

from fixtures_models import tiny_checkpoint  # noqa: E402

from weblica.integrations import trl as weblica_trl  # noqa: E402


def accelerator(fsdp_version=None, zero_stage=0):
    plugin = SimpleNamespace(fsdp_version=fsdp_version) if fsdp_version else None
    state = SimpleNamespace(deepspeed_plugin=SimpleNamespace(zero_stage=zero_stage) if zero_stage else None,
                            fsdp_plugin=plugin)
    return SimpleNamespace(state=state, unwrap_model=lambda m: m, device="cpu")


def worker(checkpoint: str, out: str) -> None:
    """One rank: shard the tiny model over the two ranks, gather it, and run a different number of
    forwards on each rank (3 on rank 0, 1 on rank 1), as two ranks playing different episodes do."""
    import torch.distributed as dist

    from weblica.train.config import GRPOConfig
    from weblica.train.fsdp import is_sharded, shard_trainable
    from weblica.train.model_io import load_trainable

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    config = GRPOConfig(device="cpu", parallelism="fsdp")
    trainable = load_trainable(Path(checkpoint), config)
    shard_trainable(trainable, config)
    model = trainable.model
    trainer = SimpleNamespace(accelerator=accelerator(fsdp_version=2), model=model, model_wrapped=model,
                              args=SimpleNamespace())
    gathered = weblica_trl.GatheredModel()
    full = {n: (p.full_tensor() if hasattr(p, "full_tensor") else p).detach().clone() for n, p in model.named_parameters()}
    with gathered(trainer) as replica:
        same = all(torch.equal(full[n], p) for n, p in replica.named_parameters())
        ids = torch.tensor([[5, 6, 7, 8]])
        logits = [replica(input_ids=ids).logits for _ in range(3 if rank == 0 else 1)]  # not in step: no hang
    # a second call reuses the replica and sees the weights after an update
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.5)
    with gathered(trainer) as again:
        moved = all(torch.allclose(p, full[n] + 0.5) for n, p in again.named_parameters())
    dist.barrier()
    Path(out).with_suffix(f".{rank}.json").write_text(json.dumps({
        "same": same, "moved": moved, "sharded_replica": is_sharded(replica), "reused": again is replica,
        "finite": all(bool(torch.isfinite(x).all()) for x in logits), "forwards": len(logits),
        "dtype": str(next(replica.parameters()).dtype)}))
    dist.destroy_process_group()


def test_fsdp2_ranks_sample_from_a_gathered_replica_without_waiting_on_each_other(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(Path(__file__).parents[1]),
                                         os.environ.get("PYTHONPATH", "")])}
    code = f"import sys; from test_trl_gather import worker; worker({str(tiny_checkpoint())!r}, sys.argv[1])"
    script = tmp_path / "run.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
                           str(script), str(tmp_path / "rank")], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank.{r}.json").read_text()) for r in (0, 1)]
    for rank, report in enumerate(ranks):
        assert report["same"] and report["moved"] and report["reused"] and report["finite"], report
        assert not report["sharded_replica"] and report["forwards"] == (3 if rank == 0 else 1)
        assert report["dtype"] == "torch.float32"


def test_zero3_gathers_through_trls_own_context_and_refuses_not_gathering(monkeypatch):
    calls = []

    class Unwrap:
        def __init__(self, model, acc, gather_deepspeed3_params=True, gradient_checkpointing_kwargs=None):
            calls.append(gather_deepspeed3_params)
            self.model = model

        def __enter__(self):
            return self.model

        def __exit__(self, *exc):
            return False

    import trl.models

    monkeypatch.setattr(trl.models, "unwrap_model_for_generation", Unwrap)
    model = torch.nn.Linear(2, 2)
    trainer = SimpleNamespace(accelerator=accelerator(zero_stage=3), model=model, model_wrapped=model,
                              args=SimpleNamespace(ds3_gather_for_generation=True))
    with weblica_trl.GatheredModel()(trainer) as got:
        assert got is model
    assert calls == [True]
    trainer.args.ds3_gather_for_generation = False
    with pytest.raises(ValueError, match="ds3_gather_for_generation=True"):
        with weblica_trl.GatheredModel()(trainer):
            pass
    # no sharding at all: the model itself, through the same context
    plain = SimpleNamespace(accelerator=accelerator(), model=model, model_wrapped=model, args=SimpleNamespace())
    with weblica_trl.GatheredModel()(plain) as got:
        assert got is model
