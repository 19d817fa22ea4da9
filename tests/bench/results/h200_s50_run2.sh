#!/usr/bin/env bash
# Session 50, run 2: session 49's attention_fp8_q_registers_s49_next.sh (written then, not run), run as written
# right after run 1 on the same machine (the bundle run 1 carried stays there; step 3 left out).
# The next measurement for attention
# with the FP8 cache.  Session 49 run 5 (Nsight Compute, 32k batch 1) found its warps bound by their
# own chains per 16-position block, long-scoreboard stalls among them: every block reloads the
# queries' A fragments from shared memory (16 loads of 8 bytes a thread at head_dim 128).  Two
# variants hold them in registers for the whole loop (FP8 instances only; compiled in session 49):
#   attention_fp8_q_high_part_registers_s49.patch  the high part (16 registers): 156-159, no spills
#   attention_fp8_q_registers_s49.patch            both parts (32 registers): 168, 20 bytes spilled
# Prepare (from the repository root), for each variant NAME in qhigh qall:
#   git worktree add /tmp/NAME HEAD && (cd /tmp/NAME && git apply <its patch>)
#   KERNELS=attention_decode PROGRAMS="attention_decode_bench gpu_test_attention_decode" \
#       tests/bench/build_gemv_variant_lib.sh NAME /tmp/NAME
#   git rev-parse --short HEAD > COMMIT
#   BUNDLE_PROGRAMS="reset attention_decode_bench" scripts/make_device_bundle.sh
# Carry: build-bundle.tar.xz, .ab/qhigh, .ab/qall, COMMIT (mind the 64 MiB: drop the variants'
# libreset.so.0.xz unless step 3 is wanted).
#  1. Each variant's quick attention test.
#  2. attention_decode_bench: HEAD and both variants, FP8 batch 1 at 1k, 8k, 32k and batch 8 at 32k,
#     alternated, 2 rounds.
#  3. (if a variant wins alone) the 32k FP8 decode step against HEAD with its library.
source tests/bench/results/start_device_run.sh
for v in qhigh qall; do
    mkdir -p /tmp/$v && for f in .ab/$v/*.xz; do xz -dc "$f" > /tmp/$v/$(basename "$f" .xz); done
    chmod +x /tmp/$v/*_bench /tmp/$v/gpu_test_* 2>/dev/null
    RESET_GPU_TEST_QUICK=1 timeout 150 /tmp/$v/gpu_test_attention_decode > "$OUT/attention_test_${v}_s50_run2.txt" 2>&1
    echo "$v test rc $?: $(tail -n 1 "$OUT/attention_test_${v}_s50_run2.txt")"
done
for round in 1 2; do
    for case in fp8:1:32768 fp8:1:8192 fp8:1:1024 fp8:8:32768; do
        for bin in build-bundle/bin/attention_decode_bench /tmp/qhigh/attention_decode_bench /tmp/qall/attention_decode_bench; do
            $bin 36 25 $case 2>/dev/null | sed "s#^{#{\"binary\": \"$bin\", \"round\": $round, #" >> "$OUT/attention_fp8_q_registers_s50_run2.jsonl"
        done
    done
done
python3 - "$OUT/attention_fp8_q_registers_s50_run2.jsonl" <<'PY'
import json, sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    arm = "qhigh" if "qhigh" in r["binary"] else "qall" if "qall" in r["binary"] else "head"
    d[(r["cache"], r["batch"], r["context"], arm)].append(r["us_per_layer"])
for k in sorted(d):
    print(*k, "%.2f us/layer" % statistics.median(d[k]), d[k])
PY
echo "done at $SECONDS s"
