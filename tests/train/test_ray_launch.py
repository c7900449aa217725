"""The Ray launch recipe (issue 40, point 4): `weblica.train.ray_launch` places one torchrun per node in a
placement group and joins them through torchrun's c10d rendezvous, node 0 hosting it. On a local Ray with
two bundles (SPREAD: this machine is the only node) the two "nodes" form one gloo world of two ranks whose
all-reduce sums both; a failing node's status is the launcher's."""
import json
import sys

import pytest

ray = pytest.importorskip("ray")

from weblica.train.ray_launch import LaunchPlan, launch, main  # noqa: E402

PROGRAM = '''
import json, os, sys
import torch, torch.distributed as dist
if len(sys.argv) > 2:
    sys.exit(int(sys.argv[2]))
dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(value)
out = {"rank": dist.get_rank(), "world": dist.get_world_size(), "node": int(os.environ["GROUP_RANK"]), "sum": value.item(),
       "args": sys.argv[1:]}
open(os.path.join(sys.argv[1], f"rank{out['rank']}.json"), "w").write(json.dumps(out))
dist.destroy_process_group()
'''


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_two_nodes_form_one_world_through_the_rendezvous(local_ray, tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    plan = LaunchPlan(nodes=2, gpus_per_node=0, cpus_per_node=1, strategy="SPREAD", program=[str(script)],
                      args=[str(tmp_path)], workdir=str(tmp_path), env={"OMP_NUM_THREADS": "1"})
    assert launch(plan, address=None) == 0
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [(r["rank"], r["world"], r["sum"]) for r in ranks] == [(0, 2, 3.0), (1, 2, 3.0)]
    assert sorted(r["node"] for r in ranks) == [0, 1]  # one rank a node, node ranks from the launcher
    # nodes whose ranks fail make the launch fail (torchrun reports a failed rank as status 1)
    failing = LaunchPlan(nodes=2, gpus_per_node=0, cpus_per_node=1, strategy="SPREAD", program=[str(script)],
                         args=[str(tmp_path), "3"], workdir=str(tmp_path), env={"OMP_NUM_THREADS": "1"})
    assert launch(failing, address=None) == 1


def test_the_command_each_node_runs():
    plan = LaunchPlan(nodes=2, gpus_per_node=8, args=["grpo", "--config", "train/qwen3vl-8b-grpo.yaml"])
    command = plan.command(1, "10.0.0.5:29400")
    assert command[:3] == [sys.executable, "-m", "torch.distributed.run"]
    for part in ("--nnodes=2", "--node-rank=1", "--nproc-per-node=8", "--rdzv-backend=c10d",
                 "--rdzv-endpoint=10.0.0.5:29400", "--rdzv-conf=is_host=false"):
        assert part in command
    assert command[-6:] == ["-m", "weblica.cli", "train", "grpo", "--config", "train/qwen3vl-8b-grpo.yaml"]
    assert "--rdzv-conf=is_host=true" in plan.command(0, "10.0.0.5:29400")


def test_the_launcher_wants_a_training_command(capsys):
    with pytest.raises(SystemExit):
        main(["--nodes", "2", "--", "run", "--tasks", "x"])
    assert "give the training command after --" in capsys.readouterr().err
