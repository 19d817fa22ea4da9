#!/usr/bin/env bash
# Session 21, run 1: the pipelined GEMV loop unrolled once (session 20's lead, now in the bundle:
# kernels/nvfp4_gemv.cu tile_quads `#pragma unroll 1`, 90 / 120 registers) against
#   u2: the library before it (6b2f717's nvfp4_gemv.cu, `#pragma unroll 2`, 106 / 125 registers),
#   p3: unroll 1 and the FP16 pipelined instance bounded for three CTAs per SM (80 registers, no
#       spills with unroll 1; with unroll 2 it spilled 8-24 bytes and was 2.6% slower, session 18),
#       so that qkv and gate_up (384 CTAs at batch 1) run two quads in flight per warp too,
# each relinked beside the bundle's objects (tests/bench/build_gemv_variant_lib.sh; p3 with its
# own gpu_test_nvfp4_gemv and gpu_test_cuda_engine, PROGRAMS=).  The GEMV test (full; the quick
# set under memcheck and racecheck) on the bundle and on p3; the decode step alternated process by
# process (Qwen3-8B shape, random NVFP4 checkpoint, greedy: 1k batch 1 x4 rounds, 1k batch 8 x3,
# 32k FP8 x3); then the engine test with memcheck on the bundle.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
for v in u2 p3; do mkdir -p /tmp/$v && for f in .ab/$v/*.xz; do xz -dc "$f" > /tmp/$v/$(basename "$f" .xz); done; done
chmod +x /tmp/p3/gpu_test_*
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
python3 tests/gpu/make_engine_models.py /tmp/engine-models > /tmp/make_engine_models.log 2>&1 &
tests=$OUT/tests_s21_run1.txt
for v in u1 p3; do
  bin=build-bundle/bin/gpu_test_nvfp4_gemv; [[ $v == p3 ]] && bin=/tmp/p3/gpu_test_nvfp4_gemv
  echo "== $v gemv" >> "$tests"
  timeout 200 $bin 20261126 >> "$tests" 2>&1; echo "$v gemv test rc=$? at $SECONDS s"
  for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 $bin 8 > /tmp/$tool.txt 2>&1; echo "$v $tool rc=$? at $SECONDS s"
    { echo "== $v $tool"; tail -n 3 /tmp/$tool.txt; } >> "$tests"
  done
done
grep -E "checks|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$tests" | head -20
# As it ran: this bare `wait` also waits for the tee of the log (a process substitution) and hung
# until the 600 s limit; run 2 (h100_s21_run2.sh) waits for the two jobs by PID instead.
wait; echo "checkpoint and engine models at $SECONDS s"
ck=/tmp/checkpoints/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local v=$1 round=$2; shift 2
    local extra=; [[ $v != u1 ]] && extra=/tmp/$v:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"variant\": \"$v\", \"round\": $round, /"
}
ab=$OUT/unroll1_ab_s21_run1.jsonl
for round in 1 2 3 4; do
    for v in u2 u1 p3; do
        run $v $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 4)); then
            run $v $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
            run $v $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
        fi
    done
done > "$ab"
python3 - "$ab" <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["variant"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "a/b at $SECONDS s"
ENGINE_MODELS=/tmp/engine-models OUT=/tmp/engine timeout 200 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "u1 engine rc $? at $SECONDS s"
{ echo "== u1 engine"; cat /tmp/engine/test_cuda_engine.log; tail -n 3 /tmp/engine/memcheck_cuda_engine.log; } >> "$tests"
grep -E "checks|ERROR SUMMARY|FAIL" /tmp/engine/test_cuda_engine.log /tmp/engine/memcheck_cuda_engine.log | tail -5
echo "done at $SECONDS s"
