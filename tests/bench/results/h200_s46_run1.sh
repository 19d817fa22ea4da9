#!/usr/bin/env bash
# Session 46, run 1 (H200, the first device of this kind since session 15): the record of
# tests/bench/run_all_on_device.sh at 01a29bd: kernel tests and sanitizers, the engine test's
# quick set (its time, unmeasured since it grew), the GEMV benchmark with its baselines, and the
# short decode grid.  Its 8 outputs come back as they are; this log is the call's output tail.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset gpu_test_cuda_engine gpu_test_nvfp4_gemv
# attention_decode_bench": 22 MB, with the 41 MB tree just under the tool's 64 MiB; the other kernel
# tests are left out, so the script's loop reports them missing, rc 127), COMMIT.
COMMIT=$(cat COMMIT) timeout 585 tests/bench/run_all_on_device.sh
