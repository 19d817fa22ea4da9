#!/usr/bin/env bash
# Session 23, run 6 (the bundle: COMMIT + the working tree): (1) where the persistent prototype's
# consumers stall, instruction by instruction: Nsight Compute's source counters (warp-state
# sampling per SASS instruction) on the compute-only launch, 8+4 warps, groups of 3, sleeping waits,
# exported as CSV; (2) the decode grid's new 2k-prompt prefill row (the prefill figure).
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/ck
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/q8-nvfp4 > /tmp/ck.log 2>&1 &
ck_job=$!
timeout 200 ncu --clock-control none --profile-from-start off --section SourceCounters --section WarpStateStats \
    --import-source yes -o /tmp/prof build-bundle/bin/persistent_chain_bench --profile 8,3,4,1,1,4,1000000 > /tmp/ncu.log 2>&1
echo "ncu rc=$? at $SECONDS s"; tail -n 3 /tmp/ncu.log
ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > /tmp/source_sass.csv 2> /tmp/source_err.txt
echo "source page rc=$? lines $(wc -l < /tmp/source_sass.csv)"; head -c 600 /tmp/source_err.txt
head -n 3 /tmp/source_sass.csv | cut -c1-400
ncu -i /tmp/prof.ncu-rep --page details --print-details all > "$OUT/persistent_chain_ncu_source_s23_run6.txt" 2>&1
xz -9 -c /tmp/source_sass.csv > "$OUT/persistent_chain_ncu_source_sass_s23_run6.csv.xz"
ls -la "$OUT"
wait $ck_job; echo "checkpoint at $SECONDS s"
build-bundle/bin/reset bench decode /tmp/ck/q8-nvfp4 --backend cuda --weights auto --json --prompt-tokens 2048 \
    --sequences 1 --tokens 16 --repeat 3 > "$OUT/prefill_2k_s23_run6.jsonl"
cat "$OUT/prefill_2k_s23_run6.jsonl"
echo "done at $SECONDS s"
