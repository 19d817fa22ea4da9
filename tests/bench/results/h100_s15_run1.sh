#!/usr/bin/env bash
# Session 15, run 1: the attention merge with its partials in registers (this tree, COMMIT) against
# the cp.async staging of 9c717d5 ("old").  Carried: build-bundle.tar.xz (this tree,
# scripts/make_device_bundle.sh), .ab/old/libreset.so.0.xz (KERNELS=attention_decode
# tests/bench/build_gemv_variant_lib.sh old <9c717d5 checkout>), .ab/attn/{bench,trace}_{old,new}.xz
# (tests/bench/build_attention_trace.sh, TRACE=0 for bench_*, run from each tree), COMMIT.
# 1. gpu_test_attention_decode (full), then memcheck and racecheck on its quick set;
# 2. attention alone: attention_decode_bench 36 25 all, old/new alternated, 2 rounds; one trace each
#    at batch 1, 1k (BF16) and 32k (FP8);
# 3. the decode step (Qwen3-8B shape, NVFP4, greedy): 1k context, batch 1 and 8, 3 rounds
#    alternated; 32k with an FP8 cache, batch 1, 2 rounds.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
xz -dk .ab/old/libreset.so.0.xz
for f in .ab/attn/*.xz; do xz -dk "$f"; done
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
t=build-bundle/bin/gpu_test_attention_decode
{ timeout 150 $t; echo "full rc=$?"
  RESET_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 $t | tail -4; echo "memcheck rc=${PIPESTATUS[0]}"
  RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 3 $t | tail -4; echo "racecheck rc=${PIPESTATUS[0]}"
} > "$OUT/attention_test.txt" 2>&1
grep -E "checks|rc=|worst|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/attention_test.txt"
echo "tests at $SECONDS s"
for r in 1 2; do
  for v in old new; do
    timeout 60 .ab/attn/bench_$v 36 25 all | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
  done
done > "$OUT/attention_ab.jsonl"
for v in old new; do
  for c in bf16:1:1024 fp8:1:32768; do timeout 60 .ab/attn/trace_$v 36 25 $c | sed "s/^{/{\"variant\": \"$v\", /"; done
done > "$OUT/attention_trace.jsonl"
python3 - "$OUT/attention_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    by.setdefault((d["cache"], d["batch"], d["context"]), {}).setdefault(d["variant"], []).append(d["us_per_layer"])
for k, v in sorted(by.items()):
    o, n = statistics.median(v["old"]), statistics.median(v["new"])
    print(f"attention {k[0]:4s} batch {k[1]} ctx {k[2]:5d}: old {' '.join(f'{x:.2f}' for x in v['old'])}  new {' '.join(f'{x:.2f}' for x in v['new'])} us/layer  {100 * (n / o - 1):+.1f}%")
PY
echo "attention at $SECONDS s"
libpath() { [[ $1 == new ]] && echo "$LD_LIBRARY_PATH" || echo "$PWD/.ab/$1:$LD_LIBRARY_PATH"; }
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
bench() { build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto --json "$@"; }
for r in 1 2 3; do
  for v in old new; do
    LD_LIBRARY_PATH=$(libpath $v) timeout 90 bench --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 2>>"$OUT/err.log" |
      sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
    if [[ $r -le 2 ]]; then
      LD_LIBRARY_PATH=$(libpath $v) timeout 90 bench --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1 2>>"$OUT/err.log" |
        sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
    fi
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/decode_ab.jsonl"
python3 - "$OUT/decode_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    by.setdefault((d.get("prompt_tokens"), d.get("sequences")), {}).setdefault(d["variant"], []).append(d["ms_per_step"])
for k, v in sorted(by.items(), key=str):
    o, n = statistics.median(v["old"]), statistics.median(v["new"])
    print(f"step ctx {k[0]} batch {k[1]}: old {' '.join(f'{x:.4f}' for x in v['old'])}  new {' '.join(f'{x:.4f}' for x in v['new'])} ms  {100 * (n / o - 1):+.2f}%")
PY
echo "done at $SECONDS s"
