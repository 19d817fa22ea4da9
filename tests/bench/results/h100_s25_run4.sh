#!/usr/bin/env bash
# Session 25, run 4 (H100, 42058cb): the grown model-loading corpus
# (tests/fuzz/grown/model_load.tar.xz, 2,136 inputs) and the committed one on
# the CUDA backend, with RESET_FUZZ_VERBOSE=1: no finding, and NaN logits from
# fuzzed weights now reported as "the model produced unusable logits".
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="fuzz_replay_model_load"), COMMIT.
echo "commit $(cat COMMIT)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar xJf build-bundle.tar.xz && source build-bundle/env.sh
mkdir -p /tmp/grown && tar xJf tests/fuzz/grown/model_load.tar.xz -C /tmp/grown
RESET_FUZZ_VERBOSE=1 RESET_FUZZ_BACKEND=cuda build-bundle/bin/fuzz_replay_model_load tests/fuzz/corpus/model_load \
    /tmp/grown/model_load > "$OUT/verbose.log" 2>&1
echo "replay status $?"
tail -n 1 "$OUT/verbose.log"
for c in reset_session_create reset_prefill reset_decode_step; do
    echo "$c: $(grep -ac "  $c: RESET_OK" "$OUT/verbose.log") OK of $(grep -ac "  $c: " "$OUT/verbose.log") calls"
done
grep -a '  reset_decode_step: RESET_ERR' "$OUT/verbose.log" | sed 's/sequence [0-9]/sequence N/' | sort | uniq -c
