#!/usr/bin/env bash
# Session 16, run 9: the q/k norm placing attention early before long attention (this tree)
# against the committed order (.ab/trigger_after_wait) over the context: batch 1 at 4k, 16k and
# 32k with a BF16 cache and 8k at batch 8 (2 rounds), and 32k with an FP8 cache, the goal's row
# (3 rounds); alternated; the streaming bandwidth measured as the grid measures it, before and after.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "commit $(cat COMMIT)"
mkdir -p /tmp/trigger_after_wait && xz -dc .ab/trigger_after_wait/libreset.so.0.xz > /tmp/trigger_after_wait/libreset.so.0
bandwidth() {
python3 - <<'PY'
import torch
n = 1 << 30
a, b = torch.empty(n, dtype=torch.uint16, device="cuda"), torch.empty(n, dtype=torch.uint16, device="cuda")
a.random_(0, 1 << 15)
times = []
for _ in range(22):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); b.copy_(a); e.record(); torch.cuda.synchronize()
    times.append(s.elapsed_time(e) / 1e3)
print({"stream_copy_GBps": 2 * 2 * n / sorted(times[2:])[10] / 1e9})
PY
}
bandwidth | tee "$OUT/bandwidth.txt"
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /dev/null 2>&1; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib != plain ]] && extra=/tmp/$lib:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode $ck --backend cuda --weights auto \
        --json "$@" 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
for round in 1 2 3; do
    for lib in trigger_after_wait plain; do
        run $lib $round --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
        if ((round < 3)); then
            run $lib $round --prompt-tokens 4096,16384,32000 --sequences 1 --tokens 32 --repeat 1
            run $lib $round --prompt-tokens 8192 --sequences 8 --tokens 32 --repeat 1
        fi
    done
    echo "round $round at $SECONDS s" >&2
done > "$OUT/rope_trigger_context_ab.jsonl"
bandwidth | tee -a "$OUT/bandwidth.txt"
python3 -c '
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l); rows.setdefault((d["prompt_tokens"], d["kv_cache"], d["sequences"], d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows): print(k, rows[k], "median", st.median(rows[k]))
' "$OUT/rope_trigger_context_ab.jsonl"
echo "done at $SECONDS s"
