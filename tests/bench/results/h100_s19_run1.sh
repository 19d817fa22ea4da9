#!/usr/bin/env bash
# Session 19, run 1: top-p rejection-first (sampling/truncation.h draw_truncated; afe6929, the bundle)
# against d33bf47's sampler (.ab/prev: kernels/sampling.cu and the CPU draw).  The sampler test
# (full, with its standalone timing; the quick set under memcheck), the step A/B alternated process by
# process at 1k, Qwen3-8B shape, random NVFP4 checkpoint: greedy, ReSET + top-p 0.95 (reset bench's
# default), the ReSET rule alone (top_p=1), 3 rounds; batch 8 ReSET + top-p, 2 rounds.  Then the engine
# test with memcheck.  Few files under $OUT (at most 8 return).
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
tests=$OUT/tests_s19_run1.txt
timeout 330 build-bundle/bin/gpu_test_sampling 20261126 > /tmp/sampling.txt 2>&1; echo "sampling test rc=$? at $SECONDS s"
cat /tmp/sampling.txt >> "$tests"
grep -E "FAIL|second draw|near-tie|test_sampling:|cut bins" /tmp/sampling.txt | head -40
grep -E "^timing" /tmp/sampling.txt | grep -E "batch 1" | cut -c1-140
RESET_GPU_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 build-bundle/bin/gpu_test_sampling 11 > /tmp/memcheck.txt 2>&1; echo "memcheck rc=$? at $SECONDS s"
{ echo "== memcheck (quick)"; tail -n 3 /tmp/memcheck.txt; } >> "$tests"
tail -n 3 /tmp/memcheck.txt
wait $ck_job; echo "checkpoint at $SECONDS s"
ck=/tmp/ck/qwen3-8b-nvfp4
run() {  # LIB ROUND bench arguments
    local lib=$1 round=$2; shift 2
    local extra=; [[ $lib == prev ]] && extra=/tmp/prev:
    env LD_LIBRARY_PATH=$extra$LD_LIBRARY_PATH build-bundle/bin/reset bench decode "$@" --backend cuda --weights auto \
        --json 2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
}
ab=$OUT/rejection_first_ab_s19_run1.jsonl
for round in 1 2 3; do
    for lib in prev new; do
        run $lib $round $ck --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
        run $lib $round $ck --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2"
        run $lib $round $ck --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2 top_p=1"
        if ((round < 3)); then
            run $lib $round $ck --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2"
            run $lib $round $ck --prompt-tokens 1024 --sequences 8 --tokens 64 --repeat 2
        fi
    done
done > "$ab"
echo "a/b at $SECONDS s"
python3 - "$ab" <<'PY'
import json, sys, statistics as st
rows = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows.setdefault((d["sequences"], d["policy"], d.get("top_p"), d["lib"]), []).append(d["ms_per_step"])
for k in sorted(rows, key=str): print(k, " ".join(f"{v:.4f}" for v in rows[k]), "median %.4f" % st.median(rows[k]))
PY
OUT=/tmp/engine timeout 250 tests/gpu/run_cuda_engine_on_device.sh > /tmp/engine.txt 2>&1; echo "engine rc $? at $SECONDS s"
{ echo "== engine"; cat /tmp/engine/test_cuda_engine.log; tail -n 3 /tmp/engine/memcheck_cuda_engine.log; } >> "$tests"
grep -E "checks|ERROR SUMMARY|FAIL" /tmp/engine.txt | head -10
echo "done at $SECONDS s"
