#!/usr/bin/env bash
# Session 25, run 2 (H100, same machine, commit 857ef9f): run 1's replay again with
# RESET_FUZZ_VERBOSE=1, counting how far the inputs got on the CUDA backend.
# Carry: build-bundle.tar.xz, fuzz-grown.tar.xz (as run 1).
tar xJf build-bundle.tar.xz && mkdir -p /tmp/grown && tar xJf fuzz-grown.tar.xz -C /tmp/grown && source build-bundle/env.sh && RESET_FUZZ_VERBOSE=1 RESET_FUZZ_BACKEND=cuda build-bundle/bin/fuzz_replay_model_load tests/fuzz/corpus/model_load /tmp/grown/merged_model_load > $OUT/verbose.log 2>&1; echo rc $?; for c in reset_model_load reset_session_create reset_prefill reset_decode_step; do echo "$c: $(grep -c "  $c: RESET_OK" $OUT/verbose.log) OK of $(grep -c "  $c: " $OUT/verbose.log)"; done; grep '  reset_model_load: ' $OUT/verbose.log | awk '{print $2}' | sort | uniq -c
