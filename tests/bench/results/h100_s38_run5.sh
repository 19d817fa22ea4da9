#!/usr/bin/env bash
# Session 38, run 5 (H100): the pipelined GEMV loop asks the L1 for the next quad's activations
# after its weight loads (kernels/nvfp4_gemv.cu, prefetch_x_l1; run 4: the quad's first MMA waited on x).
#  1. The GEMV test's quick set on the new kernel (correctness first).
#  2. nvfp4_gemv_bench, Qwen3-8B shapes, NVFP4 only, alternating old (rev 9a61320) and
#     px (this tree), 2 rounds, cold; then --warm-l2 at M = 1 and 8, 2 rounds.
#  3. The decode step, HEAD's library (lib-old) against this tree's, alternating, 4 rounds:
#     Qwen3-8B-shape NVFP4 random checkpoint, 1k prompt, batch 1 and 8, greedy, 64 tokens x 2.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_nvfp4_gemv nvfp4_gemv_bench", plus
# build-bundle/lib-old/libreset.so.0 and build-bundle/gv/gemv_bench_{old,px}), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1 &
ck=$!
echo "== 1. GEMV quick test, new kernel"
RESET_GPU_TEST_QUICK=1 timeout 120 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/gemv_quick_s38_run5.txt" 2>&1
echo "rc $? at $SECONDS s: $(tail -1 "$OUT/gemv_quick_s38_run5.txt")"
wait $ck; echo "checkpoint at $SECONDS s"
echo "== 2. GEMV bench, cold"
OUT=$OUT/gv tests/bench/run_gemv_variants_on_device.sh build-bundle/gv Qwen3-8B 2 | tail -30
echo "== 2b. GEMV bench, warm L2"
for round in 1 2; do
    for v in old px; do
        for m in 1 8; do
            build-bundle/gv/gemv_bench_$v --only Qwen3-8B --warm-l2 --m $m | grep 'M=' | sed "s/^/$v r$round /"
        done
    done
done
echo "at $SECONDS s"
echo "== 3. decode step A/B"
for seqs in 1 8; do
    tests/bench/ab_decode_on_device.sh build-bundle/lib-old $M 4 --prompt-tokens 1024 --sequences $seqs --tokens 64 --repeat 2
done > "$OUT/h100_step_ab_s38_run5.jsonl"
python3 - "$OUT/h100_step_ab_s38_run5.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d["sequences"], d["lib"]), []).append(d["ms_per_step"])
for (s, lib), v in sorted(by.items()):
    print(f"sequences {s} {lib}: {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
echo "done at $SECONDS s"
echo "== 4. Nsight Compute, new kernel, Qwen3-8B down served from the L2 (as run 4)"
tag=h100_ncu_s38_run5_Qwen3_8B_downwarm_m1
timeout 200 ncu --replay-mode application --cache-control none --clock-control none --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    -k regex:nvfp4_gemv_kernel --launch-skip 60 --launch-count 1 -o /tmp/$tag -f \
    build-bundle/bin/nvfp4_gemv_bench --only "Qwen3-8B down" --m 1 --nvfp4-only --warm-l2 > /tmp/$tag.log 2>&1
echo "ncu rc $? at $SECONDS s"
{
    ncu -i /tmp/$tag.ncu-rep --page details --print-details all
    ncu -i /tmp/$tag.ncu-rep --page source --csv --print-source sass
} > "$OUT/$tag.txt" 2>&1
grep -E "^\s+(Duration|L2 Hit Rate|Warp Cycles Per Issued Instruction) " "$OUT/$tag.txt" | head -4
grep -E "^\s+Stall " "$OUT/$tag.txt" | head -6
echo "all done at $SECONDS s"
