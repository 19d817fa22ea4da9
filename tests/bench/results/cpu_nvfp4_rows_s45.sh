#!/usr/bin/env bash
# Session 45, on the development machine (no GPU; 2 cores, nothing else running): the CPU backend's
# decode step on a random Qwen3-8B-shape NVFP4 checkpoint, the library before (0f762fb: the NVFP4
# product one row at a time) and after (8 rows interleaved, the same bits) alternating, 2 rounds;
# ms per step is the median of 3 steps after a 1-token prompt, 2 threads.
#   python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/q8; cp ../shared/data/tokenizers/qwen3/* /tmp/q8/
#   OLD=/path/to/0f762fb/libreset.so.0's directory NEW=build directory  tests/bench/results/cpu_nvfp4_rows_s45.sh
for round in 1 2; do
  for arm in old new; do
    path=$NEW; [[ $arm == old ]] && path=$OLD
    LD_LIBRARY_PATH=$path "$NEW/samples/reset" bench decode /tmp/q8 --backend cpu --threads 2 \
      --prompt-tokens 1 --tokens 3 --repeat 1 --json 2>/dev/null | sed "s/^{/{\"arm\": \"$arm\", /"
  done
done
