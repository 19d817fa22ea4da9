#!/usr/bin/env bash
# Session 49, run 8 (H200): run 7's four steps in flight, split by shape.  Alone, four in flight
# made o 10% and down 10-17% faster but qkv 5-10% slower (its split halved to fit two CTAs per SM:
# 192 CTAs on 132 SMs); in BF16 mode batch 2 -11.3%, batch 8 +1.5%.  The "deepo" library takes four
# only where the two-step plan's own split already fits one wave of two CTAs per SM (o and down;
# bf16_gemv_four_steps_o_down_s49.patch on top of run 7's patch).
#  1. deepo's gpu_test_bf16_gemv.
#  2. BF16 mode, 1k batch 2, 4 and 8: this commit, run 7's library, deepo, alternated, 2 rounds.
# Carry: build-bundle.tar.xz (run 7's), .ab/deepmma (run 7's library), .ab/deepo
# (KERNELS=bf16_gemv PROGRAMS=gpu_test_bf16_gemv), COMMIT.
source tests/bench/results/start_device_run.sh
ck=/tmp/ck/qwen3-8b-bf16
(python3 tests/bench/make_random_checkpoint.py qwen3-8b bf16 $ck > /tmp/ck.log 2>&1) &
writer=$!
for v in deepmma deepo; do
    mkdir -p /tmp/$v && for f in .ab/$v/*.xz; do xz -dc "$f" > /tmp/$v/$(basename "$f" .xz); done
done
chmod +x /tmp/deepo/gpu_test_bf16_gemv
echo "== 1. deepo bf16 gemv test at $SECONDS s"
timeout 90 /tmp/deepo/gpu_test_bf16_gemv > "$OUT/bf16_gemv_four_steps_o_down_test_s49_run8.txt" 2>&1
echo "rc $?: $(tail -n 1 "$OUT/bf16_gemv_four_steps_o_down_test_s49_run8.txt")"
grep -E "FAIL" "$OUT/bf16_gemv_four_steps_o_down_test_s49_run8.txt" | head -5
grep -E "tensor cores" "$OUT/bf16_gemv_four_steps_o_down_test_s49_run8.txt" | grep -E "qkv|o_proj|down" | sed 's/^timing: //'
wait $writer
echo "== 2. BF16 mode at $SECONDS s"
source build-bundle/env.sh
for round in 1 2; do
    for arm in head deepmma deepo; do
        path=$LD_LIBRARY_PATH
        [[ $arm != head ]] && path=/tmp/$arm:$LD_LIBRARY_PATH
        LD_LIBRARY_PATH=$path build-bundle/bin/reset bench decode $ck --backend cuda --weights auto --json \
            --prompt-tokens 1024 --sequences 2,4,8 --tokens 32 --repeat 1 2>>/tmp/ab.log |
            sed "s/^{/{\"arm\": \"$arm\", \"round\": $round, /" >> "$OUT/bf16_four_steps_ab_s49_run8.jsonl"
    done
done
python3 tests/bench/ab_summary.py "$OUT/bf16_four_steps_ab_s49_run8.jsonl" --arm arm
echo "done at $SECONDS s"
