#!/usr/bin/env bash
# Session 17, run 10: the forward pass's row maxima zeroed by the step's upload launch (a third range
# of copy_ranges, from a zeroed device buffer) instead of a memset node, so the step's graph holds
# kernel nodes only (this tree = "new") against 217cd47's library (.ab/prev, "old").  Tests: the
# engine test with memcheck.  Then the step, alternated: 1k at batch 1 greedy (4 rounds) and
# ReSET + top-p 0.95, 1k at batch 8, 32k with an FP8 cache (3 rounds).  Qwen3-8B shape, NVFP4.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/prev && xz -dc .ab/prev/libreset.so.0.xz > /tmp/prev/libreset.so.0
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1 &
ck_job=$!
OUT=/tmp/engine timeout 280 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
cp /tmp/engine/test_cuda_engine.log "$OUT/cuda_engine_s17_run10.txt"; tail -3 /tmp/engine/memcheck_cuda_engine.log >> "$OUT/cuda_engine_s17_run10.txt"
grep -E "checks|ERROR SUMMARY" "$OUT/cuda_engine_s17_run10.txt"
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib == old ]] && extra=/tmp/prev:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3 4; do
    for lib in old new; do
        run $lib $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        if ((round < 4)); then
            run $lib $round --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2"
            run $lib $round --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
            run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
        fi
    done
done > "$OUT/amax_in_upload_ab_s17_run10.jsonl"
python3 - "$OUT"/amax_in_upload_ab_s17_run10.jsonl <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["prompt_tokens"], d["sequences"], d.get("kv_cache", ""), d["policy"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
