#!/usr/bin/env bash
# Session 50, run 3 (H200): the FP8 attention loop with the high part of the queries' A fragments
# in registers (run 2: alone 32k batch 1 -1.4%, 8k -2.5%) in the tree, on top of 13f667d (the BF16
# GEMV's two pairs in flight):
#  1. tests/bench/run_all_on_device.sh without the GEMV benchmark (GEMV=0): the engine test's quick
#     set beside the bundle's kernel tests (attention quick set, memcheck, racecheck), the
#     attention benchmark, then the short decode grid: the record at this tree.
#  2. The decode step with the FP8 cache at 32k batch 1 and 8, and 8k batch 1, against 13f667d's
#     attention relinked (.ab/hattn), alternated, 3 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_bf16_gemv
# gpu_test_attention_decode attention_decode_bench"), .ab/hattn (build_gemv_variant_lib.sh hattn
# with 13f667d's tree, KERNELS=attention_decode), COMMIT.
source tests/bench/results/start_device_run.sh
GEMV=0 COMMIT=$(cat COMMIT) timeout 400 tests/bench/run_all_on_device.sh
mkdir -p /tmp/hattn && xz -dc .ab/hattn/libreset.so.0.xz > /tmp/hattn/libreset.so.0
ck=/tmp/checkpoints/qwen3-8b-nvfp4
echo "== 2. FP8 cache steps against 13f667d's attention at $SECONDS s"
for ctx in 32768 8192; do
    seqs=1,8; [[ $ctx == 8192 ]] && seqs=1
    OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/hattn $ck 3 --weights auto --kv-cache fp8 \
        --prompt-tokens $ctx --sequences $seqs --tokens 64 --repeat 2 >> "$OUT/q_high_ab_s50_run3.jsonl"
done
python3 tests/bench/ab_summary.py "$OUT/q_high_ab_s50_run3.jsonl"
echo "done at $SECONDS s"
