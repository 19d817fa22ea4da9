#!/usr/bin/env bash
# Session 23, run 7 (the bundle: COMMIT): what the NVFP4 lm_head costs in accuracy on the embedded
# model (reset-arith-4m): `reset eval` greedy on the first 500 test problems, NVFP4 W4A16 with the
# BF16 lm_head and with --lm-head nvfp4, the two processes side by side on the GPU; per-sample
# outputs for the paired comparison (same problems, same greedy rule).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
build-bundle/bin/reset eval models/reset-arith-4m training/data/test.jsonl --policy greedy --weights nvfp4 --backend cuda \
    --limit 500 --out "$OUT/eval_w4a16_bf16_head_s23_run7.jsonl" > "$OUT/eval_w4a16_bf16_head_s23_run7.txt" 2>&1 &
a=$!
build-bundle/bin/reset eval models/reset-arith-4m training/data/test.jsonl --policy greedy --weights nvfp4 --lm-head nvfp4 \
    --backend cuda --limit 500 --out "$OUT/eval_w4a16_nvfp4_head_s23_run7.jsonl" > "$OUT/eval_w4a16_nvfp4_head_s23_run7.txt" 2>&1 &
b=$!
wait $a; echo "bf16 head rc=$? at $SECONDS s"
wait $b; echo "nvfp4 head rc=$? at $SECONDS s"
tail -n 4 "$OUT"/eval_*_s23_run7.txt
echo "done at $SECONDS s"
