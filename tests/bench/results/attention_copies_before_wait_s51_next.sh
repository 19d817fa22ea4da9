#!/usr/bin/env bash
# Written in session 51, not run (its device time was spent): the next measurement for attention's
# start.  Session 51's timelines (h200_attention_trace_s51_run{1,4}.jsonl) put 0.8 µs (1k) to 1.3
# µs (32k FP8) between the PDL wait and the loop's start, and the first blocks' copies are issued
# only after the wait, although in a decode step the previous kernel (qk_norm_rope_kv_append)
# writes just each row's new token.  attention_copies_before_wait_s51.patch (on d9c806f):
# AttentionDecodeArgs::copies_before_wait, set by the session for decode steps (no slots, no GEMM;
# RESET_ATTENTION_COPIES_BEFORE_WAIT=0 turns it off): the first kStages - 1 blocks' cp.async go out
# before the wait (the L2 prefetch is then skipped), and where the new token's block was among
# them (the separate q/k norm), its row is loaded after the wait and written over the stage before
# the loop; the fused new token already overwrites its row.  ptxas (sm_90a, head_dim 128): FP8
# 164 -> 167 registers, BF16 160, new token 156 / 149, no spills.  The attention test gains a
# determinism case (the flag gives the same bits); the engine test's decode steps check the new
# row (a stale row would put the token's own K/V wrong in every layer).
# Prepare (repository root, on the commit the patch was written for or later):
#   git worktree add /tmp/head HEAD
#   git apply tests/bench/results/attention_copies_before_wait_s51.patch; cmake --build build-sm90
#   KERNELS=attention_decode SOURCES=lib/cuda/device_session.cpp tests/bench/build_gemv_variant_lib.sh head /tmp/head
#   TRACE=0 tests/bench/build_attention_trace.sh .ab/bench/plain_new
#   (cd /tmp/head && TRACE=0 "$OLDPWD"/tests/bench/build_attention_trace.sh "$OLDPWD"/.ab/bench/plain_head)
#   xz .ab/bench/*
#   git rev-parse --short HEAD > COMMIT
#   BUNDLE_PROGRAMS="reset gpu_test_attention_decode gpu_test_cuda_engine" scripts/make_device_bundle.sh
# Carry: build-bundle.tar.xz, .ab/head, .ab/bench, COMMIT.
#  1. The quick attention test (its new case) and racecheck; the engine test's quick set.
#  2. attention_decode_bench head / new, batch 1 at 1088, 8192, 32768 and batch 8 at 32768, FP8
#     and BF16, alternated, 2 rounds.
#  3. The decode step against head's attention and session: 1k batch 1 and 8, 3 rounds; 32k FP8
#     batch 1, 2 rounds.
source tests/bench/results/start_device_run.sh
ck=/tmp/checkpoints/qwen3-8b-nvfp4
(mkdir -p /tmp/checkpoints && python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 $ck > /tmp/ck.log 2>&1) &
ckpid=$!
mkdir -p /tmp/t /tmp/head && for f in .ab/bench/*.xz; do xz -dc "$f" > /tmp/t/$(basename "$f" .xz); done; chmod +x /tmp/t/*
xz -dc .ab/head/libreset.so.0.xz > /tmp/head/libreset.so.0
echo "== 1. tests at $SECONDS s"
RESET_GPU_TEST_QUICK=1 timeout 150 build-bundle/bin/gpu_test_attention_decode > "$OUT/attention_test.txt" 2>&1
echo "test rc $?: $(tail -n 1 "$OUT/attention_test.txt")"
RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck build-bundle/bin/gpu_test_attention_decode > /tmp/race.txt 2>&1
echo "racecheck rc $?: $(grep -a "RACECHECK SUMMARY" /tmp/race.txt | tail -n 1)"
wait $ckpid
PASSES=main RESET_GPU_TEST_QUICK=1 OUT=/tmp/engine timeout 120 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine.txt" 2>&1
echo "engine rc $?: $(grep -a "checks" "$OUT/engine.txt" | tail -n 1)"
echo "== 2. bench at $SECONDS s"
for round in 1 2; do
    for case in fp8:1:1088 fp8:1:8192 fp8:1:32768 fp8:8:32768 bf16:1:1088 bf16:1:8192 bf16:1:32768 bf16:8:32768; do
        for arm in head new; do
            /tmp/t/plain_$arm 36 25 $case 2>/dev/null | sed "s#^{#{\"arm\": \"$arm\", \"round\": $round, #" >> "$OUT/attention_copies_before_wait.jsonl"
        done
    done
done
echo "== 3. decode step at $SECONDS s"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 3 --weights auto \
    --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 >> "$OUT/copies_before_wait_ab.jsonl"
OUT=/tmp/ab tests/bench/ab_decode_on_device.sh /tmp/head $ck 2 --weights auto --kv-cache fp8 \
    --prompt-tokens 32768 --sequences 1 --tokens 64 --repeat 2 >> "$OUT/copies_before_wait_ab.jsonl"
python3 tests/bench/ab_summary.py "$OUT/copies_before_wait_ab.jsonl"
echo "done at $SECONDS s"
