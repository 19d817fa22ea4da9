#!/usr/bin/env bash
# Session 16, run 8, the committed tree (the q/k norm placing attention early before long attention) (COMMIT, the bundle): the engine test against the CPU
# reference with compute-sanitizer memcheck over its quick run, then the short decode grid
# (tests/bench/run_decode_grid_on_device.sh GRID=short: the goals' rows) with its streaming bandwidth.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
OUT=/tmp/engine timeout 330 tests/gpu/run_cuda_engine_on_device.sh > "$OUT/engine.txt" 2>&1; echo "engine rc=$? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/engine_full.txt"
cp /tmp/engine/memcheck_cuda_engine.log "$OUT/engine_memcheck.txt"
grep -E "checks|FAIL|ERROR SUMMARY" "$OUT/engine_full.txt" "$OUT/engine_memcheck.txt" | head
OUT=/tmp/grid GRID=short timeout $((585 - SECONDS)) tests/bench/run_decode_grid_on_device.sh > /tmp/grid.out 2>&1; echo "grid rc=$? at $SECONDS s"
cp /tmp/grid/decode_grid.jsonl /tmp/grid/decode_grid_env.json "$OUT/"
cat /tmp/grid/decode_grid_env.json
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    print(d["weights"], d["policy"], "top_p", d["top_p"], "batch", d["sequences"], "ctx", d["prompt_tokens"], d["kv_cache"], "graph" if d["cuda_graph"] else "eager", d["ms_per_step"], "ms", d["tokens_per_s"], "tok/s", d.get("pct_of_roofline", ""))
' "$OUT/decode_grid.jsonl"
echo "done at $SECONDS s"
