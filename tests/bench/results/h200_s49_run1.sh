#!/usr/bin/env bash
# Session 49, run 1 (H200): first GPU run of session 48's review commit (0a770c6), and the BF16
# lm_head on the tensor cores at batch 8 again.  Session 47 found it 519 µs in the step against
# 353 alone, its last warps 232 µs behind the median; the tensor-core path also streams only
# ~3.5 TB/s alone where the FP32 path reaches 4.1 at 1-2 tokens.  Two changes tried:
#   - RESET_BF16_GEMV_GRID=groups (a knob in this tree): one CTA per row group, placed by the
#     hardware, instead of one resident wave walking the groups (a CTA that finds no slot at the
#     start then runs its whole share late);
#   - the "paired" library (.ab/paired, kernels/bf16_gemv.cu with a K slice taking step pairs):
#     a lane's two loads per row are neighbours, so a warp asks for whole 128-byte lines.
#  1. gpu_test_nvfp4_gemv, gpu_test_bf16_gemv (HEAD's kernels, then with the grid knob), the
#     paired test (both grids).
#  2. The engine test's quick set.
#  3. 1k batch 4 and 8, alternated, 3 rounds: the lm_head FP32 path (default), tensor cores
#     (RESET_LM_HEAD_TENSOR_CORES=1), tensor cores on a grid of groups; the same two on the
#     paired library.
# Prepare: 0a770c6 with lm_head_tensor_cores_knobs_s49.patch applied (the two knobs), bundled;
# the paired library from kernels/bf16_gemv.cu as bf16_gemv_paired_variant_s49.patch makes it
# (against 0a770c6) in /tmp/paired/kernels.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_nvfp4_gemv
# gpu_test_bf16_gemv"), .ab/paired (tests/bench/build_gemv_variant_lib.sh paired /tmp/paired with
# KERNELS=bf16_gemv PROGRAMS=gpu_test_bf16_gemv), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
mkdir -p /tmp/paired && for f in .ab/paired/*.xz; do xz -dc "$f" > /tmp/paired/$(basename "$f" .xz); done
chmod +x /tmp/paired/gpu_test_bf16_gemv
echo "== 1. kernel tests at $SECONDS s"
timeout 90 build-bundle/bin/gpu_test_nvfp4_gemv > "$OUT/gemv_test_s49_run1.txt" 2>&1
echo "gemv rc $?: $(tail -n 1 "$OUT/gemv_test_s49_run1.txt")"
grep -E "FAIL" "$OUT/gemv_test_s49_run1.txt" | head -5
for grid in wave groups; do
    for t in build-bundle/bin/gpu_test_bf16_gemv /tmp/paired/gpu_test_bf16_gemv; do
        name=$([[ $t == /tmp/* ]] && echo paired || echo head)_$grid
        RESET_BF16_GEMV_GRID=$grid timeout 90 $t > "$OUT/bf16_gemv_${name}_s49_run1.txt" 2>&1
        echo "bf16 gemv $name rc $?: $(tail -n 1 "$OUT/bf16_gemv_${name}_s49_run1.txt")"
        grep -E "FAIL" "$OUT/bf16_gemv_${name}_s49_run1.txt" | head -3
        grep -E "tensor cores" "$OUT/bf16_gemv_${name}_s49_run1.txt" | grep -E "tokens 8" | sed 's/^timing: //'
    done
done
echo "== 2. engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 100 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s49_run1.txt"
grep -E "checks|FAIL" "$OUT/engine_s49_run1.txt" | head
wait $writer
echo "== 3. lm_head A/B at $SECONDS s"
source build-bundle/env.sh
for round in 1 2 3; do
    for arm in "head fp32" "head tc" "head tc_groups" "paired tc" "paired tc_groups"; do
        read -r lib mode <<<"$arm"
        path=$LD_LIBRARY_PATH
        [[ $lib == paired ]] && path=/tmp/paired:$LD_LIBRARY_PATH
        tc=0 grid=wave
        [[ $mode == tc* ]] && tc=1
        [[ $mode == *groups ]] && grid=groups
        LD_LIBRARY_PATH=$path RESET_LM_HEAD_TENSOR_CORES=$tc RESET_BF16_GEMV_GRID=$grid \
            build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json --prompt-tokens 1024 \
            --sequences 4,8 --tokens 64 --repeat 2 2>>"$OUT/lm_head_ab.log" |
            sed "s/^{/{\"arm\": \"$lib $mode\", \"round\": $round, /" >> "$OUT/lm_head_tc_ab_s49_run1.jsonl"
    done
done
python3 tests/bench/ab_summary.py "$OUT/lm_head_tc_ab_s49_run1.jsonl" --arm arm
echo "done at $SECONDS s"
