#!/usr/bin/env bash
# Session 47, run 7 (H200): the engine test's passes beside the main one, quick set, at this tree:
# new_token (test_model with the new token inside attention in every step) and the new float_input
# (test_model with the o and down GEMVs reading FP32 and the pair kernel from 2 rows, the paths the
# default left in session 47).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine"), COMMIT.
source tests/bench/results/start_device_run.sh
PASSES=new_token,float_input RESET_GPU_TEST_QUICK=1 timeout 420 tests/gpu/run_cuda_engine_on_device.sh
echo "engine rc $? at $SECONDS s"
