#!/usr/bin/env bash
# Session 47, run 1 (H200): checks after session 46, and two A/B questions.
#  1. The engine test's quick set (its CPU reference now prefills in 16-row chunks, session 46).
#  2. The o GEMV at 2-8 rows: attention's FP32 output read directly (the default since session 8,
#     measured then at 1 row) against one activation-preparation launch first
#     (RESET_O_FLOAT_INPUT_ROWS 8 = direct at every row count, 0 = never), 3 rounds alternated,
#     NVFP4 Qwen3-8B shape, 1k, batch 1, 2, 4, 8.
#  3. Session 46's unexplained loss with the BF16 lm_head on the tensor cores at batch 8: the step
#     with RESET_LM_HEAD_TENSOR_CORES 0 / 1, alternated, each run under nvidia-smi sampling every
#     20 ms (SM clock, power, throttle reasons): does the step run at a lower clock?
#  4. The step timeline (-DRESET_STEP_TRACE library, .ab/trace) at 1k batch 1 and 8, now that the
#     pair kernel, the sampler and the final rms_norm record their ends.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), .ab (trace), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-nvfp4
(python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
writer=$!
echo "== 1. engine test (quick set) at $SECONDS s"
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 150 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1
echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_s47_run1.txt"
grep -E "checks|FAIL" "$OUT/engine_s47_run1.txt" | head
wait $writer
echo "== 2. o input A/B at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_env_decode_on_device.sh RESET_O_FLOAT_INPUT_ROWS "8 0" $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,2,4,8 --tokens 64 --repeat 2 > "$OUT/o_input_ab_s47_run1.jsonl"
python3 tests/bench/ab_summary.py "$OUT/o_input_ab_s47_run1.jsonl"
echo "== 3. lm_head on the tensor cores, clocks, at $SECONDS s"
fields=timestamp,clocks.sm,clocks.mem,power.draw,clocks_event_reasons.active
nvidia-smi --query-gpu=$fields --format=csv -c 1 > /dev/null 2>&1 || fields=${fields/event/throttle}
for round in 1 2; do
    for v in 0 1; do
        nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 20 > /tmp/smi_${v}_$round.csv &
        smi=$!
        RESET_LM_HEAD_TENSOR_CORES=$v build-bundle/bin/reset bench decode $ck --backend cuda --json --weights auto \
            --prompt-tokens 1024 --sequences 8 --tokens 512 --repeat 3 2>/dev/null \
            | sed "s/^{/{\"env\": \"RESET_LM_HEAD_TENSOR_CORES=$v\", \"round\": $round, /" >> "$OUT/lm_head_tc_s47_run1.jsonl"
        kill $smi; wait $smi 2>/dev/null
    done
done
python3 tests/bench/ab_summary.py "$OUT/lm_head_tc_s47_run1.jsonl"
python3 - /tmp/smi_*.csv <<'PY' | tee "$OUT/lm_head_tc_clocks_s47_run1.txt"
import statistics, sys
for path in sorted(sys.argv[1:]):
    rows = [line.split(", ") for line in open(path) if line.count(",") >= 4]
    busy = [r for r in rows if float(r[3]) > 250.0]  # samples while the GPU draws decode power
    if not busy:
        print(path, "no busy samples"); continue
    sm = [float(r[1]) for r in busy]; power = [float(r[3]) for r in busy]
    reasons = sorted({r[4].strip() for r in busy})
    print(f"{path}: {len(busy)} of {len(rows)} samples busy; SM MHz median {statistics.median(sm):.0f} "
          f"min {min(sm):.0f}; power median {statistics.median(power):.0f} W max {max(power):.0f}; throttle {reasons}")
PY
echo "== 4. step timeline at $SECONDS s"
for rows in 1 8; do
    tests/bench/step_trace_on_device.sh $ck b${rows}_1k "$OUT/step_trace_s47_run1.txt" -- \
        --tokens 64 --repeat 1 --prompt-tokens 1024 --sequences $rows
done
cat "$OUT/step_trace_s47_run1.txt"
echo "done at $SECONDS s"
