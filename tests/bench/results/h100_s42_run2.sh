#!/usr/bin/env bash
# Session 42, run 2 (H100): RoPE's cosines and sines formed before griddepcontrol.wait in
# qk_norm_rope_kv_append (this tree) against after it (the previous commit's kernel, relinked:
# KERNELS=qk_norm_rope_kv_append tests/bench/build_gemv_variant_lib.sh qk_old <checkout of HEAD~>).
#  1. The kernel's GPU test (against a double reference, then attention over what it appended),
#     full; its quick set under compute-sanitizer memcheck and racecheck.
#  2. The decode step, old against new, alternating rounds: Qwen3-8B-shape NVFP4 random checkpoint,
#     greedy, 1k prompt at batch 1 and 8 (4 rounds), 32k prompt with an FP8 cache at batch 1 (2 rounds).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_qk_norm_rope_kv_append", plus
# build-bundle/lib-old/libreset.so.0), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1 &
ck=$!
echo "== 1. qk_norm_rope_kv_append test"
timeout 200 build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_test_s42_run2.txt" 2>&1
echo "full rc $? at $SECONDS s: $(tail -1 "$OUT/qk_test_s42_run2.txt")"
for tool in memcheck racecheck; do
    RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 \
        build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_test_${tool}_s42_run2.txt" 2>&1
    echo "$tool rc $? at $SECONDS s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/qk_test_${tool}_s42_run2.txt" | tail -1)"
done
wait $ck; echo "checkpoint at $SECONDS s"
echo "== 2. decode step A/B"
{
    for seqs in 1 8; do
        tests/bench/ab_decode_on_device.sh build-bundle/lib-old $M 4 --prompt-tokens 1024 --sequences $seqs \
            --tokens 64 --repeat 2
    done
    tests/bench/ab_decode_on_device.sh build-bundle/lib-old $M 2 --prompt-tokens 32768 --sequences 1 \
        --kv-cache fp8 --tokens 64 --repeat 2
} > "$OUT/h100_step_ab_s42_run2.jsonl"
python3 - "$OUT/h100_step_ab_s42_run2.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    by.setdefault((d["prompt_tokens"], d.get("kv_cache"), d["sequences"], d["lib"]), []).append(d["ms_per_step"])
for (p, kv, s, lib), v in sorted(by.items()):
    print(f"prompt {p} kv {kv} sequences {s} {lib}: {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
echo "done at $SECONDS s"
