#!/usr/bin/env bash
# Session 46: the CPU backend's prefill one token a pass (9df2ba6) against a chunk of up to 16 tokens a
# pass (cpu_forward_chunk), alternated, on this machine's two cores (no other load):
#   a random Qwen3-8B-shape NVFP4 checkpoint (tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 DIR),
#   32-token prompt; the embedded model (models/reset-arith-4m), 2,000-token prompt.
# OLD=build of 9df2ba6's reset (CPU), NEW=this tree's; CKPT=the Qwen3-8B checkpoint.  JSON lines on stdout.
set -u
for round in 1 2; do
    for lib in old new; do
        bin=$OLD; [[ $lib == new ]] && bin=$NEW
        "$bin" bench decode "$CKPT" --backend cpu --threads 2 --prompt-tokens 32 --tokens 1 --repeat 1 --json 2>/dev/null |
            sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
        "$bin" bench decode models/reset-arith-4m --backend cpu --threads 2 --prompt-tokens 2000 --tokens 1 --repeat 3 --json \
            2>/dev/null | sed "s/^{/{\"lib\": \"$lib\", \"round\": $round, /"
    done
done
