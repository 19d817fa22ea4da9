#!/usr/bin/env bash
# Session 38, run 1 (H100): how fast the GEMV goes when its weight comes from the L2.
# nvfp4_gemv_bench on the Qwen3-8B shapes that fit 60% of the L2 (qkv 14.2 MB, o 9.4 MB,
# down 28.3 MB), M = 1 and 8: cold (weights rotate through > 4x the L2, as always) and
# --warm-l2 (one copy, served from the L2 after the first launch), plain and chained.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="nvfp4_gemv_bench"), COMMIT.
source tests/bench/results/start_device_run.sh
B=build-bundle/bin/nvfp4_gemv_bench
for round in 1 2; do
    for m in 1 8; do
        echo "== round $round, M=$m, cold"
        $B --only Qwen3-8B --nvfp4-only --m $m --json "$OUT/h100_gemv_cold_s38_run1_r${round}_m$m.json" --commit "$(cat COMMIT)"
        echo "== round $round, M=$m, warm L2"
        $B --only Qwen3-8B --warm-l2 --m $m --json "$OUT/h100_gemv_warm_s38_run1_r${round}_m$m.json" --commit "$(cat COMMIT)"
    done
done 2>&1 | grep -v 'mlp'
echo "done at $SECONDS s"
