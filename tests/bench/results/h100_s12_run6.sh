#!/usr/bin/env bash
# Carried with: device run, carry .ab12 (this script; the extra builds named below, made here with
# scripts/make_device_bundle.sh's build of the named commit) and build-bundle.tar.xz (and COMMIT).
# Session 12, run 6 (commit in COMMIT: NVFP4 GEMV evict-first, BF16 GEMV default L2 policy): quick
# tests, the short decode grid, then the three L2 policies alternated (this tree; .ab12/allhint:
# 48421b8, both evict-first; .ab12/nohint: neither).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
for t in bf16_gemv nvfp4_gemv; do
  RESET_GPU_TEST_QUICK=1 timeout 90 build-bundle/bin/gpu_test_$t > "/tmp/q_$t.txt" 2>&1; echo "$t rc $?: $(tail -1 /tmp/q_$t.txt)"
done | tee "$OUT/quick_tests.txt"
GRID=short timeout 330 tests/bench/run_decode_grid_on_device.sh > /dev/null 2>&1; echo "grid rc $? at $SECONDS s"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid.jsonl" "$OUT/decode_grid_env.json" qwen3-8b > "$OUT/decode_grid.md" 2>&1
cat "$OUT/decode_grid.md"
gzip -f "$OUT/decode_grid.log"
ck=/tmp/checkpoints
for r in 1 2 3; do
  for lib in this allhint nohint; do
    path=$LD_LIBRARY_PATH; [[ $lib != this ]] && path=$PWD/.ab12/$lib:$LD_LIBRARY_PATH
    for w in bf16 nvfp4; do
      LD_LIBRARY_PATH=$path build-bundle/bin/reset bench decode $ck/qwen3-8b-$w --backend cuda --weights $([[ $w == bf16 ]] && echo bf16 || echo auto) \
        --prompt-tokens 1024 --tokens 64 --repeat 2 --json 2>>"$OUT/err.log" | sed "s/^{/{\"lib\": \"$lib\", \"round\": $r, /"
    done
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/l2_policy_ab.jsonl"
python3 - "$OUT/l2_policy_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d["weights"], d["lib"]), []).append(d["ms_per_step"])
for k, v in sorted(by.items()):
    print(f"{k[0]:14s} {k[1]:8s} {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
