#!/usr/bin/env bash
# Session 44, run 1 (H100): the decode step's new token inside attention (AttentionNewToken: the
# q/k norm, RoPE and K/V append done by attention_decode, one launch less per layer).
#  1. gpu_test_qk_norm_rope_kv_append, whole (the new-token cases: the fused launch against
#     qk_norm_rope_kv_append + attention_decode, outputs and cache bit for bit), then its new-token
#     cases under compute-sanitizer memcheck and racecheck (the ring stage written after its copy).
#  2. The decode step: HEAD's library relinked (lib-old, ba7a11f) against this tree's, fused
#     (default) and with RESET_NEW_TOKEN_IN_ATTENTION=0, alternating old/new/off, 4 rounds:
#     Qwen3-8B-shape NVFP4 random checkpoint, 1k prompt batch 1 and 8, 32k prompt FP8 cache batch 1;
#     greedy, 64 tokens x 2.
#  3. test_cuda_engine's test_model on the engine models and fixtures (against the CPU reference).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_qk_norm_rope_kv_append gpu_test_cuda_engine",
# plus build-bundle/lib-old/libreset.so.0 from ba7a11f), COMMIT.
source tests/bench/results/start_device_run.sh
M=/tmp/ckpt/qwen3-8b-nvfp4
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $M > /tmp/ckpt.log 2>&1 &
ck=$!
echo "== 1. qk test, whole"
timeout 150 build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_test_s44_run1.txt" 2>&1
echo "rc $? at $SECONDS s: $(tail -1 "$OUT/qk_test_s44_run1.txt")"
grep FAIL "$OUT/qk_test_s44_run1.txt" | head -5
for tool in memcheck racecheck; do
    RESET_GPU_TEST_ONLY=new_token timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 \
        build-bundle/bin/gpu_test_qk_norm_rope_kv_append > "$OUT/qk_new_token_${tool}_s44_run1.txt" 2>&1
    echo "$tool rc $? at $SECONDS s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/qk_new_token_${tool}_s44_run1.txt" | tail -1)"
done
wait $ck; echo "checkpoint at $SECONDS s"
echo "== 2. decode step A/B/off"
step() {  # arm, then bench arguments
    local arm=$1; shift
    local path=$LD_LIBRARY_PATH fuse=1
    [[ $arm == old ]] && path=$PWD/build-bundle/lib-old:$LD_LIBRARY_PATH
    [[ $arm == off ]] && fuse=0
    LD_LIBRARY_PATH=$path RESET_NEW_TOKEN_IN_ATTENTION=$fuse timeout 120 build-bundle/bin/reset bench decode $M \
        --backend cuda --json --tokens 64 --repeat 2 "$@" 2>>"$OUT/bench_errors.log" | sed "s/^{/{\"arm\": \"$arm\", /"
}
for round in 1 2 3 4; do
    for arm in old new off; do
        step $arm --prompt-tokens 1024 --sequences 1,8
        step $arm --prompt-tokens 32768 --sequences 1 --kv-cache fp8
    done
    echo "round $round at $SECONDS s" >&2
done > "$OUT/h100_new_token_ab_s44_run1.jsonl"
python3 - "$OUT/h100_new_token_ab_s44_run1.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    key = (d.get("prompt_tokens"), d.get("sequences"), d.get("kv_cache"))
    by.setdefault(key, {}).setdefault(d["arm"], []).append(d["ms_per_step"])
for key, arms in sorted(by.items(), key=str):
    med = {a: statistics.median(v) for a, v in arms.items()}
    line = "  ".join(f"{a} {med[a]:.4f} [{' '.join(f'{x:.4f}' for x in arms[a])}]" for a in ("old", "new", "off") if a in arms)
    rel = f"  new/old {med['new'] / med['old'] - 1:+.2%}" if "new" in med and "old" in med else ""
    print(key, line, rel)
PY
echo "== 3. engine test_model"
RESET_GPU_TEST_ONLY=test_model SANITIZE=0 timeout 240 tests/gpu/run_cuda_engine_on_device.sh > /dev/null 2>&1
echo "engine rc $? at $SECONDS s: $(tail -1 "$OUT/test_cuda_engine.log")"
cp "$OUT/test_cuda_engine.log" "$OUT/engine_s44_run1.txt"
grep -E "FAIL" "$OUT/engine_s44_run1.txt" | head -10
echo "done at $SECONDS s"
