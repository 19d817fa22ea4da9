#!/usr/bin/env bash
# Session 16, run 1: the RMSNorm inside the GEMV (Nvfp4GemvArgs::norm_weight).
# The GEMV test (full, then memcheck and racecheck on the quick set: the
# normed rows live in shared memory), then the decode step with the norm in
# the GEMV (RESET_NORM_IN_GEMV=8, the default) against the rms_norm_prepare
# launch (=0), alternated over 3 rounds, Qwen3-8B shape, NVFP4, 1k, greedy.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/test_nvfp4_gemv.txt" 2>&1; echo "gemv test rc=$? at $SECONDS s"
grep -E "checks|FAIL" "$OUT/test_nvfp4_gemv.txt" | head -20
RESET_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv > /tmp/memcheck.txt 2>&1; echo "memcheck rc=$? at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv > /tmp/racecheck.txt 2>&1; echo "racecheck rc=$? at $SECONDS s"
(tail -n 4 /tmp/memcheck.txt; tail -n 4 /tmp/racecheck.txt) > "$OUT/sanitizers_nvfp4_gemv.txt"; cat "$OUT/sanitizers_nvfp4_gemv.txt"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
OUT=/tmp/ab timeout $((590 - SECONDS)) tests/bench/ab_env_decode_on_device.sh RESET_NORM_IN_GEMV "0 8" /tmp/ck/qwen3-8b-nvfp4 3 \
    --weights auto --prompt-tokens 1024 --sequences 1,2,8 --tokens 64 --repeat 2 > "$OUT/norm_in_gemv_ab.jsonl"
echo "ab rc=$? at $SECONDS s"
tail -n 5 /tmp/ab/ab_env_decode.log
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["sequences"], d["env"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/norm_in_gemv_ab.jsonl"
echo "done at $SECONDS s"
