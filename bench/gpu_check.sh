#!/usr/bin/env bash
# GPU check for a machine with a CUDA GPU (not part of CI); bench/gpu_check.py says what it runs.
# Needs torch and transformers, and vllm for the vLLM part (pip install -e '.[train,gpu]'). weblica is
# taken from this checkout, so a machine without weblica's other dependencies can run it too.
# Usage: bash bench/gpu_check.sh [--out DIR]        dry run on a CPU: bash bench/gpu_check.sh --device cpu --quick
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec "${PYTHON:-python3}" bench/gpu_check.py "$@"
