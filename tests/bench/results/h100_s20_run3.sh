#!/usr/bin/env bash
# Session 20, run 3: the pipelined GEMV loop loads the epilogue's residuals in its last quad
# (EarlyResidual, kernels/nvfp4_gemv.cu), on ("on", the bundle) against off
# (RESET_NVFP4_GEMV_EARLY_RESIDUAL=0, the same library).  The GEMV test (full; quick set under
# memcheck and racecheck), the engine test with memcheck, the decode step alternated process by
# process (Qwen3-8B shape, random NVFP4 checkpoint, greedy: 1k batch 1 x4 rounds, 1k batch 8 x3,
# 32k FP8 x2), and, where batch 1 got faster, the short decode grid (the goals' rows).
# The bundle was built from d95b353 with tests/bench/results/gemv_early_residual_s20.patch applied.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/checkpoints
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/checkpoints/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
tests=$OUT/tests_s20_run3.txt
timeout 200 build-bundle/bin/gpu_test_nvfp4_gemv 20261126 > /tmp/gemv.txt 2>&1; echo "gemv test rc=$? at $SECONDS s"
cat /tmp/gemv.txt >> "$tests"
for tool in memcheck racecheck; do
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 build-bundle/bin/gpu_test_nvfp4_gemv 8 > /tmp/$tool.txt 2>&1; echo "$tool rc=$? at $SECONDS s"
  { echo "== $tool"; tail -n 3 /tmp/$tool.txt; } >> "$tests"
done
OUT=/tmp/engine timeout 280 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; tail -n 3 /tmp/engine/memcheck_cuda_engine.log; } >> "$tests"
grep -E "checks|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$tests" | head -20
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/checkpoints/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local v=$1 round=$2; shift 2
    local flag=1; [[ $v == off ]] && flag=0
    env RESET_NVFP4_GEMV_EARLY_RESIDUAL=$flag build-bundle/bin/reset bench decode $ck \
        --backend cuda --weights auto --json "$@" 2>/dev/null | sed "s/^{/{\"variant\": \"$v\", \"round\": $round, /"
}
ab=$OUT/early_residual_ab_s20_run3.jsonl
for round in 1 2 3 4; do
    for v in off on; do
        run $v $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 4)); then run $v $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2; fi
        if ((round < 3)); then run $v $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1; fi
    done
done > "$ab"
faster=$(python3 - "$ab" <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["variant"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]), file=sys.stderr)
on, off = st.median(rows[(1024, 1, "bf16", "greedy", "on")]), st.median(rows[(1024, 1, "bf16", "greedy", "off")])
print(1 if on < off else 0)
PY
)
echo "a/b at $SECONDS s, on faster at batch 1: $faster"
if [[ $faster == 1 ]]; then
  OUT=/tmp/grid GRID=short CHECKPOINTS=/tmp/checkpoints timeout 300 tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
  cp /tmp/grid/decode_grid.jsonl "$OUT/decode_grid_s20_run3.jsonl"; cp /tmp/grid/decode_grid_env.json "$OUT/decode_grid_env_s20_run3.json"
  python3 tests/bench/decode_grid_report.py "$OUT/decode_grid_s20_run3.jsonl" "$OUT/decode_grid_env_s20_run3.json" qwen3-8b > "$OUT/decode_grid_short_s20_run3.md"
  tail -n 14 "$OUT/decode_grid_short_s20_run3.md"
fi
echo "done at $SECONDS s"
