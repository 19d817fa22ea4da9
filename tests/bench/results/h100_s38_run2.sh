#!/usr/bin/env bash
# Session 38, run 2 (H100): two MMA chains per tile in the NVFP4 GEMV (kernels/nvfp4_gemv.cu,
# kMmaChains: even supers into one accumulator, odd into another) against the single chain.
#  1. The GEMV test's quick set on the new kernel (correctness first).
#  2. nvfp4_gemv_bench, Qwen3-8B shapes, NVFP4 only, alternating old (rev 1f23a00, one chain) and
#     c2 (this tree), 2 rounds, cold; then --warm-l2 at M = 1 and 8, 2 rounds.
#  3. The decode step, HEAD's library (lib-old) against this tree's, alternating, 4 rounds:
#     Qwen3-8B-shape NVFP4 random checkpoint, 1k prompt, batch 1 and 8, greedy, 64 tokens x 2.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_nvfp4_gemv", plus
# build-bundle/lib-old/libreset.so.0 and build-bundle/gv/gemv_bench_{old,c2}), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1 &
ck=$!
echo "== 1. GEMV quick test, new kernel"
RESET_GPU_TEST_QUICK=1 timeout 120 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/gemv_quick_s38_run2.txt" 2>&1
echo "rc $? at $SECONDS s: $(tail -1 "$OUT/gemv_quick_s38_run2.txt")"
wait $ck; echo "checkpoint at $SECONDS s"
echo "== 2. GEMV bench, cold"
OUT=$OUT/gv tests/bench/run_gemv_variants_on_device.sh build-bundle/gv Qwen3-8B 2 | tail -30
echo "== 2b. GEMV bench, warm L2"
for round in 1 2; do
    for v in old c2; do
        for m in 1 8; do
            build-bundle/gv/gemv_bench_$v --only Qwen3-8B --warm-l2 --m $m | grep 'M=' | sed "s/^/$v r$round /"
        done
    done
done
echo "at $SECONDS s"
echo "== 3. decode step A/B"
for seqs in 1 8; do
    tests/bench/ab_decode_on_device.sh build-bundle/lib-old $M 4 --prompt-tokens 1024 --sequences $seqs --tokens 64 --repeat 2
done > "$OUT/h100_step_ab_s38_run2.jsonl"
python3 - "$OUT/h100_step_ab_s38_run2.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d["sequences"], d["lib"]), []).append(d["ms_per_step"])
for (s, lib), v in sorted(by.items()):
    print(f"sequences {s} {lib}: {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
echo "done at $SECONDS s"
