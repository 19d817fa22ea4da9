#!/usr/bin/env bash
# Session 20, run 1: attention's merge through thread-block clusters (distributed shared memory).
# The bundle is the working tree ("on"); RESET_ATTENTION_CLUSTER=0 turns the clusters off in the same
# library ("off"); d95b353's kernels/attention_decode.cu relinked (.ab/prev, "prev": 49 splits, no
# clusters).  The attention test (full), attention alone (attention_decode_bench, on/off, 2 rounds),
# then the decode step alternated process by process at 1k, batch 1, Qwen3-8B shape, random NVFP4
# checkpoint, greedy, 3 rounds.  Few files under $OUT (at most 8 return).
# The bundle was built from d95b353 with tests/bench/results/attention_cluster_merge_s20.patch applied.
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
tests=$OUT/tests_s20_run1.txt
timeout 240 build-bundle/bin/gpu_test_attention_decode 20261126 > /tmp/attn.txt 2>&1; echo "attention test rc=$? at $SECONDS s"
cat /tmp/attn.txt >> "$tests"
grep -E "FAIL|test_attention_decode|timing" /tmp/attn.txt | head -40
bench=$OUT/attention_alone_s20_run1.jsonl
for round in 1 2; do
    for v in off on; do
        flag=; [[ $v == off ]] && flag=0
        env ${flag:+RESET_ATTENTION_CLUSTER=$flag} build-bundle/bin/attention_decode_bench 36 25 all 2>/dev/null |
            sed "s/^{/{\"variant\": \"$v\", \"round\": $round, /"
    done
done > "$bench"
echo "attention bench at $SECONDS s"
python3 - "$bench" <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("trace"): continue
    key = tuple((k, d[k]) for k in sorted(d) if k in ("cache", "batch", "context", "splits"))
    rows.setdefault(key, {}).setdefault(d["variant"], []).append(d["us_per_layer"])
for k, v in rows.items(): print(k, {n: "%.2f" % st.median(x) for n, x in v.items()})
PY
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # VARIANT ROUND bench arguments
    local v=$1 round=$2; shift 2
    local extra= flag=
    [[ $v == prev ]] && extra=/tmp/prev:
    [[ $v == off ]] && flag=0
    env ${flag:+RESET_ATTENTION_CLUSTER=$flag} LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode "$@" \
        --backend cuda --weights auto --json 2>/dev/null | sed "s/^{/{\"variant\": \"$v\", \"round\": $round, /"
}
ab=$OUT/attention_cluster_ab_s20_run1.jsonl
for round in 1 2 3; do
    for v in prev off on; do
        run $v $round $ck --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
    done
done > "$ab"
echo "a/b at $SECONDS s"
python3 - "$ab" <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["sequences"], d["policy"], d["variant"]), []).append(d["ms_per_step"])
for k in sorted(rows, key=str): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
echo "done at $SECONDS s"
