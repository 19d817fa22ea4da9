#!/usr/bin/env bash
# Session 26, run 1 (H100): the device sampler's test (tests/gpu/test_sampling.cu)
# with two new row shapes — finite logits out to +-FLT_MAX (max - min and z - max
# overflow float; a tie group at FLT_MAX) and denormal logits (256 value bins over
# a few denormals need a scale past FLT_MAX) — in every candidate-list case, the
# second-draw cases and the tiny vocabularies; then compute-sanitizer memcheck in
# quick mode.  Built from the kernel sources by tests/gpu/run_engine_tests_on_device.sh.
exec > >(tee "$OUT/run.log") 2>&1
set -u
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
start=$(date +%s)
TESTS=test_sampling OUT=$OUT tests/gpu/run_engine_tests_on_device.sh 20261126
echo "status $? in $(( $(date +%s) - start )) s"
