#!/usr/bin/env bash
# run_engine_tests_on_device.sh — build the CUDA decode-engine kernels' GPU
# tests from the kernel sources alone (the GPU machine lacks the host
# library's dev packages, as in tests/bench/run_on_device.sh), run each, then
# compute-sanitizer memcheck on each in quick mode.  Outputs under $OUT
# (default ./build-device/out).  Usage, from the repository root:
#   tests/gpu/run_engine_tests_on_device.sh [seed]
# Environment: ARCH (default 90a), SANITIZE=0 to skip compute-sanitizer, TESTS to pick tests.
set -uo pipefail
arch=${ARCH:-90a}
out=${OUT:-$PWD/build-device/out}
build=$PWD/build-device
seed=${1:-}
mkdir -p "$build" "$out"

nvcc_flags=(-std=c++17 -O3 -Iinclude -Ilib -I. -Itests/gpu --expt-relaxed-constexpr --Werror all-warnings
            -Xcompiler=-Wall,-Wextra,-fopenmp -lineinfo "-gencode=arch=compute_${arch},code=sm_${arch}")
# test name -> the kernel sources it needs
declare -A sources=(
    [test_attention_decode]="kernels/attention_decode.cu"
    [test_rms_norm]="kernels/rms_norm.cu"
    [test_qk_norm_rope_kv_append]="kernels/qk_norm_rope_kv_append.cu kernels/attention_decode.cu"
    [test_sampling]="kernels/sampling.cu lib/sampling/sampler.cpp lib/sampling/entropy.cpp lib/sampling/truncation.cpp lib/api/errors.cpp"
    [test_embedding_lookup]="kernels/embedding_lookup.cu lib/api/errors.cpp"
    [test_silu_mul]="kernels/silu_mul.cu lib/api/errors.cpp"
    [test_bf16_gemv]="kernels/bf16_gemv.cu lib/api/errors.cpp"
    [test_prefill_epilogue]="kernels/prefill_epilogue.cu lib/api/errors.cpp"
    [test_nvfp4_dequantize]="kernels/nvfp4_dequantize.cu kernels/nvfp4_gemv_layout.cpp lib/api/errors.cpp"
    [test_rms_norm_prepare]="kernels/rms_norm_prepare.cu kernels/rms_norm.cu kernels/nvfp4_quantize_activations.cu lib/engine/nvfp4_linear.cpp lib/api/errors.cpp"
)

# TESTS="test_a test_b" runs a subset.
if [[ -n ${TESTS:-} ]]; then
    for t in "${!sources[@]}"; do [[ " $TESTS " == *" $t "* ]] || unset "sources[$t]"; done
fi

echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/device.txt"

echo "== build (sm_$arch)"
pids=()
for t in "${!sources[@]}"; do
    # shellcheck disable=SC2086
    nvcc "${nvcc_flags[@]}" "tests/gpu/$t.cu" ${sources[$t]} -o "$build/$t" -lgomp > "$out/build_$t.log" 2>&1 &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
cat "$out"/build_*.log
[[ $status == 0 ]] || { echo "BUILD FAILED"; exit 1; }

summary=()
for t in "${!sources[@]}"; do
    echo "== $t"
    # shellcheck disable=SC2086
    "$build/$t" $seed > "$out/$t.log" 2>&1
    rc=$?
    head -n 40 "$out/$t.log"; echo "..."; tail -n 12 "$out/$t.log"
    summary+=("$t: exit $rc")
    [[ $rc == 0 ]] || status=1
done
if [[ ${SANITIZE:-1} != 0 ]]; then
    for t in "${!sources[@]}"; do
        echo "== compute-sanitizer memcheck $t (quick)"
        RESET_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 3 "$build/$t" $seed \
            > "$out/memcheck_$t.log" 2>&1
        rc=$?
        tail -n 3 "$out/memcheck_$t.log"
        summary+=("memcheck $t: exit $rc")
        [[ $rc == 0 ]] || status=1
    done
fi
echo "== summary"
grep -h "timing:" "$out"/test_*.log || true
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
exit $status
