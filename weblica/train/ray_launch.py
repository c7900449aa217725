"""Training on a Ray cluster: one `torchrun` per node, placed by Ray, joined by torchrun's own rendezvous.

    python -m weblica.train.ray_launch --address auto --nodes 2 --gpus-per-node 8 -- \\
        grpo --config train/qwen3vl-8b-grpo.yaml

Ray reserves `nodes` bundles of `gpus-per-node` GPUs (and `cpus-per-node` CPUs: the rollout browsers run on
them) in a placement group, one bundle a node (STRICT_SPREAD), and starts one actor in each. The first
actor names its node's address and a free port; every actor then runs

    torchrun --nnodes N --node-rank i --nproc-per-node G --rdzv-backend c10d --rdzv-endpoint ADDR:PORT \\
        -m weblica.cli train ARGS...

in the working directory (the code, recipe, tasks and output_dir must be on a filesystem every node sees,
or in the same place on each), streams its output prefixed with the node rank, and the launcher exits
with the first non-zero status. Ray does nothing once the ranks run: the trainer is the same program as
under `weblica train --nproc` (`weblica.train.distributed`), and each rank still plays its own episodes in
its own Chromium. Without GPUs (`--gpus-per-node 0`) the ranks run on CPUs with gloo, as the test does.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence


@dataclass(frozen=True)
class LaunchPlan:
    nodes: int = 1
    gpus_per_node: int = 8
    cpus_per_node: int = 16
    strategy: str = "STRICT_SPREAD"  # one node a bundle; SPREAD lets a one-node test cluster hold them all
    program: list[str] = field(default_factory=lambda: ["-m", "weblica.cli", "train"])
    args: list[str] = field(default_factory=list)
    workdir: str = "."
    env: dict[str, str] = field(default_factory=dict)

    def command(self, node_rank: int, endpoint: str) -> list[str]:
        """The torchrun command of node `node_rank` (ranks per node: one per GPU, or one on a CPU node)."""
        return [sys.executable, "-m", "torch.distributed.run", f"--nnodes={self.nodes}", f"--node-rank={node_rank}",
                f"--nproc-per-node={max(self.gpus_per_node, 1)}", "--rdzv-backend=c10d",
                f"--rdzv-endpoint={endpoint}", f"--rdzv-id=weblica-{endpoint}",
                # node 0 hosts the rendezvous store, whatever the other nodes' host names say
                f"--rdzv-conf=is_host={'true' if node_rank == 0 else 'false'}", *self.program, *self.args]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


class NodeRunner:
    """A Ray actor holding one node's bundle: it says where it is and runs that node's torchrun."""

    def address(self) -> tuple[str, int]:
        import ray

        return ray.util.get_node_ip_address(), free_port()

    def run(self, plan: LaunchPlan, node_rank: int, endpoint: str) -> int:
        env = {**os.environ, **plan.env}
        if plan.gpus_per_node:  # Ray narrows CUDA_VISIBLE_DEVICES to the bundle's GPUs: torchrun maps ranks on them
            import ray

            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in ray.get_gpu_ids())
        process = subprocess.Popen(plan.command(node_rank, endpoint), cwd=plan.workdir, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert process.stdout is not None
        for line in process.stdout:
            print(f"[node {node_rank}] {line}", end="", flush=True)
        return process.wait()


def launch(plan: LaunchPlan, address: str | None = "auto", init_kwargs: dict[str, Any] | None = None) -> int:
    """Run `plan` on the Ray cluster at `address` (None: the Ray already initialised in this process);
    returns the first non-zero exit status of a node, else 0."""
    import ray
    from ray.util.placement_group import placement_group, remove_placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    started = False
    if address is not None and not ray.is_initialized():
        ray.init(address=None if address == "local" else address, **(init_kwargs or {}))
        started = True
    bundle = {"CPU": plan.cpus_per_node, **({"GPU": plan.gpus_per_node} if plan.gpus_per_node else {})}
    group = placement_group([dict(bundle) for _ in range(plan.nodes)], strategy=plan.strategy)
    try:
        ray.get(group.ready(), timeout=600)
        runner = ray.remote(NodeRunner)
        actors = [runner.options(num_cpus=plan.cpus_per_node, num_gpus=plan.gpus_per_node,
                                 scheduling_strategy=PlacementGroupSchedulingStrategy(group, i)).remote()
                  for i in range(plan.nodes)]
        host, port = ray.get(actors[0].address.remote())
        endpoint = f"{host}:{port}"
        statuses = ray.get([actor.run.remote(plan, i, endpoint) for i, actor in enumerate(actors)])
    finally:
        remove_placement_group(group)
        if started:
            ray.shutdown()
    return next((s for s in statuses if s), 0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="python -m weblica.train.ray_launch [options] -- sft|grpo --config FILE ...")
    parser.add_argument("--address", default="auto", help="Ray address (auto: the cluster this machine is in)")
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--gpus-per-node", type=int, default=8, help="training ranks per node (0: one CPU rank)")
    parser.add_argument("--cpus-per-node", type=int, default=16, help="CPUs to reserve (rollout browsers)")
    parser.add_argument("--strategy", default="STRICT_SPREAD", choices=["STRICT_SPREAD", "SPREAD", "PACK"])
    parser.add_argument("--workdir", default=os.getcwd(), help="where each node runs (a shared checkout)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="-- then the arguments of `weblica train`")
    options = parser.parse_args(argv)
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    if not args or args[0] not in ("sft", "grpo"):
        parser.error("give the training command after --, e.g. -- grpo --config train/qwen3vl-8b-grpo.yaml")
    if options.nodes < 1 or options.gpus_per_node < 0:
        parser.error("--nodes must be >= 1 and --gpus-per-node >= 0")
    plan = LaunchPlan(options.nodes, options.gpus_per_node, options.cpus_per_node, options.strategy,
                      args=list(args), workdir=options.workdir)
    return launch(plan, options.address)


if __name__ == "__main__":
    sys.exit(main())
