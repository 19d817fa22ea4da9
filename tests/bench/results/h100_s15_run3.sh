#!/usr/bin/env bash
# Session 15, run 3: three attention merges, alternated.
#   old  9c717d5: partials staged in shared memory by cp.async;
#   v1   f6a02f4: partials in registers, 16 splits per round, a branch per split;
#   (v2, a7f3bbf, straight-line rounds with a division per weight: run 2)
#   v3   5a6d381 (COMMIT, the bundle): v2 with one division per head.
# Carried: build-bundle.tar.xz (v3), .ab/{old,v1}/libreset.so.0.xz (KERNELS=attention_decode
# tests/bench/build_gemv_variant_lib.sh NAME <that tree>), .ab/attn/{bench,trace}_{old,v1,v3}.xz
# (tests/bench/build_attention_trace.sh, TRACE=0 for bench_*, from each tree), COMMIT.
# 1. attention alone: attention_decode_bench 36 25 all, 2 rounds; traces at batch 1: 1k BF16,
#    8k BF16, 32k FP8;
# 2. the decode step (Qwen3-8B shape, NVFP4, greedy): 1k, batch 1 and 8, 3 rounds; 32k with an
#    FP8 cache, batch 1, 2 rounds (old, v1, v3);
# 3. memcheck and racecheck on the attention test's quick set, then the full test (v3).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
for v in old v1; do xz -dk .ab/$v/libreset.so.0.xz; done
for f in .ab/attn/*.xz; do xz -dk "$f"; done
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
t=build-bundle/bin/gpu_test_attention_decode
variants="old v1 v3"
for r in 1 2; do
  for v in $variants; do
    timeout 60 .ab/attn/bench_$v 36 25 all | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
  done
done > "$OUT/attention_ab.jsonl"
for v in $variants; do
  for c in bf16:1:1024 bf16:1:8192 fp8:1:32768; do timeout 60 .ab/attn/trace_$v 36 25 $c | sed "s/^{/{\"variant\": \"$v\", /"; done
done > "$OUT/attention_trace.jsonl"
python3 - "$OUT/attention_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    by.setdefault((d["cache"], d["batch"], d["context"]), {}).setdefault(d["variant"], []).append(d["us_per_layer"])
for k, v in sorted(by.items()):
    o = statistics.median(v["old"])
    print(f"attention {k[0]:4s} batch {k[1]} ctx {k[2]:5d} us/layer: " + "  ".join(
        f"{n} {statistics.median(x):.2f} ({100 * (statistics.median(x) / o - 1):+.1f}%)" for n, x in v.items()))
PY
echo "attention at $SECONDS s"
variants="old v1 v3"
libpath() { [[ $1 == v3 ]] && echo "$LD_LIBRARY_PATH" || echo "$PWD/.ab/$1:$LD_LIBRARY_PATH"; }
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
bench=(build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto --json)
for r in 1 2 3; do
  for v in $variants; do
    LD_LIBRARY_PATH=$(libpath $v) timeout 90 "${bench[@]}" --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 2>>"$OUT/err.log" |
      sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
    if [[ $r -le 2 ]]; then
      LD_LIBRARY_PATH=$(libpath $v) timeout 90 "${bench[@]}" --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1 2>>"$OUT/err.log" |
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
    o = statistics.median(v["old"])
    print(f"step ctx {k[0]} batch {k[1]} ms: " + "  ".join(
        f"{n} {' '.join(f'{y:.4f}' for y in x)} med {statistics.median(x):.4f} ({100 * (statistics.median(x) / o - 1):+.2f}%)" for n, x in v.items()))
PY
echo "decode at $SECONDS s"
{ RESET_GPU_TEST_QUICK=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 $t | tail -4; echo "memcheck rc=${PIPESTATUS[0]}"
  RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 $t | tail -4; echo "racecheck rc=${PIPESTATUS[0]}"
} > "$OUT/attention_test.txt" 2>&1
grep -E "checks|rc=|SUMMARY" "$OUT/attention_test.txt"
echo "sanitizers at $SECONDS s"
stdbuf -oL timeout $((570 - SECONDS)) $t >> "$OUT/attention_test.txt" 2>&1; echo "full rc=$?" >> "$OUT/attention_test.txt"
grep -E "checks|rc=|worst" "$OUT/attention_test.txt"
echo "done at $SECONDS s"
