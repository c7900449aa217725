#!/usr/bin/env bash
# GPU check for one CUDA GPU (not part of CI; ~8 minutes on one H100): the weight sync from an FSDP-sharded
# trainer into vLLM with CUDA graphs on, after one real optimizer step, gated on the max, 99th percentile and
# mean of |log-prob| differences; then bf16 GRPO/SFT figures. bench/gpu_check.py says what it runs.
# Needs the Python 3.12 GPU environment: pip install -r requirements/gpu-py312.txt (torch 2.14, vLLM 0.33).
# weblica is taken from this checkout, so it need not be installed. Exit status 1 when a gate fails.
# Usage: bash bench/gpu_check.sh [--out DIR] [--parts sync,tiny]
#        dry run on a CPU (an hf stand-in for vLLM): bash bench/gpu_check.sh --device cpu --quick
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec "${PYTHON:-python3}" bench/gpu_check.py "$@"
