#!/usr/bin/env bash
# Session 49, run 4 (H200): the o and down GEMVs of the 5120-wide models (320 tiles: Qwen3-14B,
# Qwen3-32B, R1-Distill-Qwen-14B) at half the K slices.  At 8 slices they are 320 CTAs, more than
# two per SM, so they run the plain loop (one quad in flight per warp); at 4 slices, 160 CTAs run
# the pipelined loop (two in flight), as Qwen3-8B's o and down (256 CTAs) do since session 18.
# Knob: RESET_NVFP4_GEMV_MAX_SLICES (gemv_max_slices_knob_s49.patch, on 43e19d0).
#  1. gpu_test_nvfp4_gemv with the cap at 4.
#  2. nvfp4_gemv_bench --nvfp4-only on those shapes, caps 8 and 4 alternated.
#  3. A random Qwen3-32B NVFP4 checkpoint: 1k batch 1 and 8, caps 8 and 4 alternated, 2 rounds.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset nvfp4_gemv_bench gpu_test_nvfp4_gemv"), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-32b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-32b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. gemv test, slices capped at 4, at $SECONDS s"
RESET_NVFP4_GEMV_MAX_SLICES=4 timeout 90 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/gemv_test_cap4_s49_run4.txt" 2>&1
echo "gemv (cap 4) rc $?: $(tail -n 1 "$OUT/gemv_test_cap4_s49_run4.txt")"
grep -E "FAIL" "$OUT/gemv_test_cap4_s49_run4.txt" | head -5
echo "== 2. kernel bench at $SECONDS s"
for shape in "32B o" "32B down" "14B o" "14B down" "Qwen3-8B o"; do
    for cap in 8 4; do
        echo "-- $shape, cap $cap" >> "$OUT/gemv_bench_slices_s49_run4.txt"
        RESET_NVFP4_GEMV_MAX_SLICES=$cap timeout 60 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only "$shape" \
            2>&1 | grep -E "M=(1|8) " >> "$OUT/gemv_bench_slices_s49_run4.txt"
    done
done
cat "$OUT/gemv_bench_slices_s49_run4.txt" | sed -E 's/ +/ /g' | cut -c1-150
wait $writer
echo "== 3. Qwen3-32B decode at $SECONDS s ($(tail -n 1 /tmp/ck.log))"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_NVFP4_GEMV_MAX_SLICES "8 4" $ck 2 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 > "$OUT/max_slices_32b_ab_s49_run4.jsonl"
python3 tests/bench/ab_summary.py "$OUT/max_slices_32b_ab_s49_run4.jsonl"
tail -n 3 /tmp/ab/ab_env_decode.log
echo "done at $SECONDS s"
