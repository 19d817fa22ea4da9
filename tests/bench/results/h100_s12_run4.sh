#!/usr/bin/env bash
# Carried with: device run, carry .ab12 (this script; the extra builds named below, made here with
# scripts/make_device_bundle.sh's build of the named commit) and build-bundle.tar.xz (and COMMIT).
# Session 12, run 4 (commit in COMMIT): the short decode grid, then the GEMV benchmark with its
# baselines and the read ceiling.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
GRID=short timeout 330 tests/bench/run_decode_grid_on_device.sh > /dev/null 2>&1; echo "grid rc $? at $SECONDS s"
python3 tests/bench/decode_grid_report.py "$OUT/decode_grid.jsonl" "$OUT/decode_grid_env.json" qwen3-8b > "$OUT/decode_grid.md" 2>&1
cat "$OUT/decode_grid.md" | head -40
rm -f "$OUT/decode_grid.log.gz"; gzip -f "$OUT/decode_grid.log"
timeout 200 build-bundle/bin/nvfp4_gemv_bench --json "$OUT/bench.json" --commit "$(cat COMMIT)" > /tmp/bench.log 2>&1; echo "bench rc $? at $SECONDS s"
PYTHONUNBUFFERED=1 timeout 60 python3 tests/bench/tinygemm_bench.py --json "$OUT/tinygemm.json" > /tmp/tinygemm.log 2>&1; echo "tinygemm rc $?"
python3 tests/bench/report.py "$OUT/bench.json" "$OUT/tinygemm.json" --markdown "$OUT/results.md"
grep -iE "goal|read|layer" "$OUT/results.md" | head -40
