#!/usr/bin/env bash
# run_all_on_device.sh — one GPU-machine call that reproduces the committed
# session results: the engine test's quick set (against the CPU reference) alongside the
# kernel tests and compute-sanitizer, then, with the GPU to themselves, the
# NVFP4 GEMV benchmark with its baselines (run_on_device.sh bench) and the
# decode grid (run_decode_grid_on_device.sh, GRID=short by default).  From
# the repository root, with build-bundle/ carried (scripts/make_device_bundle.sh):
#   COMMIT=$(git rev-parse --short HEAD) tests/bench/run_all_on_device.sh
# Outputs under $OUT: results.md, bench.json, tinygemm.json (GEMV),
# decode_grid.{jsonl,md}, decode_grid_env.json, and logs.tar.xz (every log;
# the device tool returns at most 8 files).  Takes about 6 minutes on an H100.
# Optional stages: OLD_LIB=path/to/tarball of old/libreset.so.0 (a build of an
# earlier commit) adds decode_ab.jsonl, the decode step of both libraries
# alternated in this run (tests/bench/ab_decode_on_device.sh); GEMV=0 skips
# the GEMV benchmark; GRID=none the decode grid; the attention benchmark's
# JSON lines go to attention.jsonl.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-$PWD/build-device/out}
logs=$out/logs
mkdir -p "$logs"
start=$(date +%s)
stage() { echo "[t=$(($(date +%s) - start))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader |
    tee "$logs/device.txt"
[[ -d build-bundle ]] || tar xJf build-bundle.tar.xz
source build-bundle/env.sh
# Correctness only, so it may share the GPU with the kernel tests; the measurements wait for it.
# The engine test's quick set, main pass only: the whole test took ~390 s on the H100 by
# session 43, past the 320 s here (tests/gpu/run_cuda_engine_on_device.sh runs it, in a call
# of its own); the quick set's time has not been measured since it grew.
(PASSES=main RESET_GPU_TEST_QUICK=1 OUT=$logs timeout 320 tests/gpu/run_cuda_engine_on_device.sh >"$logs/engine.log" 2>&1
 echo "engine rc=$?" >"$logs/engine.rc") &
engine=$!
# The grid's checkpoints meanwhile (disk and CPU only).
checkpoints=${CHECKPOINTS:-/tmp/checkpoints}
(mkdir -p "$checkpoints"
 for f in nvfp4 bf16; do
     [[ -f $checkpoints/qwen3-8b-$f/model.safetensors ]] ||
         python3 tests/bench/make_random_checkpoint.py qwen3-8b $f "$checkpoints/qwen3-8b-$f"
 done >"$logs/checkpoints.log" 2>&1) &
writer=$!
stage "kernel tests"
# A test left out of the bundle (BUNDLE_PROGRAMS, to fit the device tool's 64 MiB) is named, not run.
have() { [[ -x build-bundle/bin/$1 ]] || { echo "$1: not in the bundle, not run"; return 1; }; }
for t in nvfp4_gemv nvfp4_dequantize qk_norm_rope_kv_append rms_norm rms_norm_prepare; do
    have gpu_test_$t || continue
    timeout 200 build-bundle/bin/gpu_test_$t >"$logs/$t.log" 2>&1
    echo "$t rc=$?: $(tail -n 1 "$logs/$t.log")"
done
if have gpu_test_attention_decode; then
    RESET_GPU_TEST_QUICK=1 timeout 200 build-bundle/bin/gpu_test_attention_decode >"$logs/attention_quick.log" 2>&1
    echo "attention (quick) rc=$?: $(tail -n 1 "$logs/attention_quick.log")"
fi
for test in nvfp4_gemv attention_decode; do
    have gpu_test_$test || continue
    for tool in memcheck racecheck; do
        RESET_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 \
            build-bundle/bin/gpu_test_$test >"$logs/${test}_$tool.log" 2>&1
        echo "$test $tool rc=$?"
    done
done
stage "waiting for the engine test"
wait $engine
cat "$logs/engine.rc"
grep -E "checks|FAIL" "$logs/test_cuda_engine.log" | head -8
if [[ -x build-bundle/bin/attention_decode_bench ]]; then
    stage "attention benchmark"
    timeout 200 build-bundle/bin/attention_decode_bench >"$out/attention.jsonl" 2>"$logs/attention_bench.log"
    echo "attention bench rc=$?"
    cat "$out/attention.jsonl"
fi
if [[ ${GEMV:-1} != 0 ]]; then
    stage "GEMV benchmark"
    OUT=$out tests/bench/run_on_device.sh bench >"$logs/gemv_bench.log" 2>&1
    echo "gemv bench rc=$?"
    sed -n '/Goals of issue 5/,$p' "$out/results.md"
fi
if [[ -n ${OLD_LIB:-} ]]; then
    stage "decode A/B against the old library"
    wait $writer
    mkdir -p /tmp/old-lib && tar xJf "$OLD_LIB" -C /tmp/old-lib
    old_dir=$(dirname "$(find /tmp/old-lib -name libreset.so.0 | head -n 1)")
    nv=$checkpoints/qwen3-8b-nvfp4
    OUT=$logs tests/bench/ab_decode_on_device.sh "$old_dir" "$nv" 2 --weights auto --prompt-tokens 1024 \
        --sequences 1,8 --tokens 64 --repeat 2 >"$out/decode_ab.jsonl"
    OUT=$logs tests/bench/ab_decode_on_device.sh "$old_dir" "$nv" 1 --weights auto --prompt-tokens 32000 \
        --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1 >>"$out/decode_ab.jsonl"
    python3 - "$out/decode_ab.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(d["lib"], d["round"], "batch", d["sequences"], "context", d["prompt_tokens"], d["kv_cache"], d["ms_per_step"], "ms")
PY
fi
wait $writer
if [[ ${GRID:-short} == none ]]; then
    tar cJf "$out/logs.tar.xz" -C "$out" logs && rm -rf "$logs"
    stage "done (GRID=none: no decode grid)"
    exit 0
fi
stage "decode grid"
echo "${COMMIT:-unknown}" >COMMIT
GRID=${GRID:-short} OUT=$out CHECKPOINTS=$checkpoints timeout 330 tests/bench/run_decode_grid_on_device.sh \
    >"$logs/grid.log" 2>&1
echo "grid rc=$?"
python3 tests/bench/decode_grid_report.py "$out/decode_grid.jsonl" "$out/decode_grid_env.json" qwen3-8b \
    >"$out/decode_grid.md" 2>>"$logs/grid.log"
cat "$out/decode_grid.md"
for f in device.txt bench.log tinygemm.log memcheck.log racecheck.log test.log decode_grid.log; do
    [[ -f $out/$f ]] && mv "$out/$f" "$logs/"
done
tar cJf "$out/logs.tar.xz" -C "$out" logs && rm -rf "$logs"
stage "done"
