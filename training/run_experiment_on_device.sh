#!/usr/bin/env bash
# run_experiment_on_device.sh — the issue-8 experiment on the GPU machine, within one
# device call, resumable across calls.
#
#   scripts/make_device_bundle.sh                 # here: the sm_90a build, packed
#   (device) training/run_experiment_on_device.sh [SECONDS] [-- extra run_experiment.py options]
#
# Runs training/run_experiment.py with the CUDA backend of build-bundle/bin/reset, the
# default scale (2,000 test problems x 8 samples), shards of 125 problems, 8 processes at
# once, for at most SECONDS (default 520), then packs the output directory into
# $OUT/experiment.tar.xz whether or not it finished.  If experiment.tar.xz is present in
# the repository root (carried from an earlier call), the run resumes from it: the
# runner skips every configuration already complete.
set -uo pipefail
cd "$(dirname "$0")/.."
budget=${1:-520}
shift || true
[[ ${1:-} == -- ]] && shift
out=${OUT:-/tmp/out}
mkdir -p "$out"
[[ -d build-bundle ]] || tar xJf build-bundle.tar.xz
source build-bundle/env.sh  # the bundle's libraries and the machine's cuBLAS
work=/tmp/reset-exp
if [[ -f experiment.tar.xz ]]; then
    mkdir -p /tmp/resume && tar xJf experiment.tar.xz -C /tmp/resume && rm -rf "$work" && mv /tmp/resume/reset-exp "$work"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
git rev-parse HEAD >>"$out/device.txt" 2>/dev/null
export PYTHONUNBUFFERED=1
timeout --signal=INT "$budget" python3 training/run_experiment.py --reset build-bundle/bin/reset \
    --backend cuda --out "$work" --shard-size 125 --jobs 8 "$@" 2>&1 | tee "$out/experiment.log"
echo "run_experiment exit: ${PIPESTATUS[0]}" | tee -a "$out/experiment.log"
tar -cJf "$out/experiment.tar.xz" -C /tmp reset-exp
ls -la "$out"
