#!/usr/bin/env bash
# Session 13, run 3: the pair's barrier with its two words on separate L2 lines (this tree, "lines"),
# and the same with a 64 ns back-off in the poll (.ab13/backoff), against two launches ("off").
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
xz -dk .ab13/backoff/libreset.so.0.xz
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
for lib in lines backoff; do
  path=$LD_LIBRARY_PATH; [[ $lib == backoff ]] && path=$PWD/.ab13/backoff:$LD_LIBRARY_PATH
  LD_LIBRARY_PATH=$path RESET_GEMV_PAIR=1 timeout 100 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only "Qwen3-8B mlp" > "$OUT/bench_$lib.txt" 2>&1
  grep -E "mlp" "$OUT/bench_$lib.txt"
done
RESET_GPU_TEST_QUICK=1 RESET_GEMV_PAIR=1 timeout 100 build-bundle/bin/gpu_test_nvfp4_gemv 5 > "$OUT/test_gemv.log" 2>&1; echo "test rc=$?"; tail -n 1 "$OUT/test_gemv.log"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
for r in 1 2 3; do
  for v in off lines backoff; do
    path=$LD_LIBRARY_PATH; [[ $v == backoff ]] && path=$PWD/.ab13/backoff:$LD_LIBRARY_PATH
    pair=1; [[ $v == off ]] && pair=0
    LD_LIBRARY_PATH=$path RESET_GEMV_PAIR=$pair timeout 60 build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto \
      --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 --json 2>>"$OUT/err.log" | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/pair_ab.jsonl"
python3 - "$OUT/pair_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["variant"]), []).append(d["ms_per_step"])
for k, v in sorted(by.items(), key=str):
    print(f"{str(k[0]):4s} {k[1]:8s} {' '.join(f'{x:.4f}' for x in v)}  median {statistics.median(v):.4f}")
PY
