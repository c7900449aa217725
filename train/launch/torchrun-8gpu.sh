#!/usr/bin/env bash
# One 8-GPU node (or several: set NNODES, NODE_RANK and MASTER_ADDR on each) training a GRPO recipe.
#   bash train/launch/torchrun-8gpu.sh [RECIPE] [--set key=value ...]
#   RECIPE defaults to train/qwen3vl-8b-grpo.yaml; DRY_RUN=1 prints the checks and the command only.
# Before it starts: the GPUs torchrun will use, /dev/shm's room (weight syncs go through it), vLLM importable
# (the Python 3.12 environment: pip install -r requirements/gpu-py312.txt && pip install --no-deps -e .),
# and the recipe's task files. Each rank prints the per-rank memory estimate before it trains.
set -euo pipefail
cd "$(dirname "$0")/../.."
RECIPE="${1:-train/qwen3vl-8b-grpo.yaml}"
[ $# -gt 0 ] && shift
NPROC="${NPROC:-8}" NNODES="${NNODES:-1}" NODE_RANK="${NODE_RANK:-0}"
MASTER_ADDR="${MASTER_ADDR:-127.0.0.1}" MASTER_PORT="${MASTER_PORT:-29500}"
PYTHON="${PYTHON:-python3}"
fail() { echo "torchrun-8gpu: $*" >&2; [ -n "${DRY_RUN:-}" ] || exit 1; }

[ -f "$RECIPE" ] || fail "no recipe at $RECIPE"
if command -v nvidia-smi >/dev/null; then
  GPUS=$(nvidia-smi -L | wc -l)
  [ "$GPUS" -ge "$NPROC" ] || fail "$GPUS GPU(s) visible for NPROC=$NPROC ranks (one rank a GPU): set NPROC"
else
  fail "nvidia-smi not found: this recipe needs NVIDIA GPUs (weblica train grpo --config train/tiny-cpu.yaml runs on CPUs)"
fi
SHM_MB=$(df -Pm /dev/shm 2>/dev/null | awk 'NR==2 {print $4}')
[ "${SHM_MB:-0}" -ge 4096 ] || echo "torchrun-8gpu: /dev/shm has ${SHM_MB:-no} MB free; weight syncs fall back to disk (docker run --shm-size=16g)" >&2
"$PYTHON" -c "import vllm" 2>/dev/null || fail "vllm is not importable by $PYTHON: use the Python 3.12 environment (train/README.md, 'The GPU recipe')"
for key in tasks eval_tasks; do
  FILE=$(sed -n "s/^$key:[[:space:]]*\([^[:space:]#]*\).*/\1/p" "$RECIPE" | head -1)
  [ -z "$FILE" ] || [ -f "$FILE" ] || fail "$key file $FILE does not exist: weblica synth --split $([ $key = tasks ] && echo train || echo val) --n N --out $(dirname "$FILE")"
done

# browsers need the cores more than the trainer's CPU threads; NCCL's watchdog must outlast a round of rollouts
COMMAND=(env OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" TORCH_NCCL_ASYNC_ERROR_HANDLING=1
  "$PYTHON" -m torch.distributed.run --nnodes="$NNODES" --node-rank="$NODE_RANK" --nproc-per-node="$NPROC"
  --rdzv-backend=c10d --rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT"
  -m weblica.cli train grpo --config "$RECIPE" "$@")
echo "${COMMAND[*]}"
[ -n "${DRY_RUN:-}" ] || exec "${COMMAND[@]}"
