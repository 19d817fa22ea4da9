#!/usr/bin/env bash
# run_decode_grid_on_device.sh — the CUDA engine's decode benchmark (issue 6) on
# the GPU machine, from the repository root, with build-bundle/ carried over
# (scripts/make_device_bundle.sh).  Writes random-weight checkpoints at the
# Qwen3-8B shape (tests/bench/make_random_checkpoint.py: BF16, and a ModelOpt
# NVFP4 export), measures the streaming bandwidth with torch in the same run,
# then runs `reset bench decode --json` over the grid.  JSON lines in
# $OUT/decode_grid.jsonl, the device and bandwidth in $OUT/decode_grid_env.json.
# GRID=short runs only the 1k rows of the goals and 32k with an FP8 cache;
# GRID=models runs Qwen3-32B and R1-Distill-Qwen-7B (NVFP4) and the transformers
# baseline (tests/bench/transformers_baseline.py) instead of the Qwen3-8B grid.
set -uo pipefail
out=${OUT:-$PWD/build-device/out}
mkdir -p "$out"
source build-bundle/env.sh  # the bundle's libraries and the machine's cuBLAS
reset=build-bundle/bin/reset
ckpt=${CHECKPOINTS:-/tmp/checkpoints}
shape=${SHAPE:-qwen3-8b}
mkdir -p "$ckpt"
for fmt in nvfp4 bf16; do
    [[ -f $ckpt/$shape-$fmt/model.safetensors ]] || python3 tests/bench/make_random_checkpoint.py "$shape" "$fmt" "$ckpt/$shape-$fmt"
done
python3 - "$out/decode_grid_env.json" <<'PY'
# Streaming bandwidth: copy 2 GiB buffers (well past the 50 MB L2), CUDA events, median of 20.
import json, subprocess, sys, torch
n = 1 << 30
a, b = torch.empty(n, dtype=torch.uint16, device="cuda"), torch.empty(n, dtype=torch.uint16, device="cuda")
a.random_(0, 1 << 15)
times = []
for _ in range(22):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); b.copy_(a); e.record(); torch.cuda.synchronize()
    times.append(s.elapsed_time(e) / 1e3)
t = sorted(times[2:])[10]
env = {"device": torch.cuda.get_device_name(0), "stream_copy_GBps": 2 * 2 * n / t / 1e9,
       "driver": subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True).stdout.strip()}
json.dump(env, open(sys.argv[1], "w")); print(env)
PY
git_commit=$(cat COMMIT 2>/dev/null || echo unknown)
run() {  # run ARGS... : one reset bench decode process, JSON lines appended
    echo "== reset bench decode $*" | tee -a "$out/decode_grid.log"
    "$reset" bench decode "$@" --json --backend cuda 2>>"$out/decode_grid.log" | tee -a "$out/decode_grid.jsonl"
}
nv=$ckpt/$shape-nvfp4
bf=$ckpt/$shape-bf16
if [[ ${GRID:-main} == models ]]; then
    # The other two models of the issue (NVFP4 exports; Qwen3-32B in BF16 would not fit this
    # machine's 64 GiB disk next to the rest), their device memory at 8k (the 24 GB goal), and
    # the transformers BF16 baseline at the Qwen3-8B shape.
    for other in qwen3-32b r1-distill-qwen-7b; do
        [[ -f $ckpt/$other-nvfp4/model.safetensors ]] ||
            python3 tests/bench/make_random_checkpoint.py "$other" nvfp4 "$ckpt/$other-nvfp4"
        run "$ckpt/$other-nvfp4" --weights auto --prompt-tokens 1024,8192 --sequences 1,8 --kv-cache bf16,fp8 \
            --tokens 32 --repeat 1
    done
    timeout 300 python3 tests/bench/transformers_baseline.py "$out/transformers_baseline.jsonl" 2>>"$out/decode_grid.log"
    echo "commit $git_commit" >> "$out/decode_grid.log"
    exit 0
fi
if [[ ${GRID:-main} == short ]]; then
    # The 1k-context rows of the goals, and 32k with an FP8 cache.
    run "$nv" --weights auto --prompt-tokens 1024 --sequences 1,8 --compare-eager --tokens 64 --repeat 2
    run "$nv" --weights w4a4 --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
    # The lm_head in NVFP4 too (the export's BF16 lm_head quantized on load): the option's speed.
    run "$nv" --weights auto --lm-head nvfp4 --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
    run "$nv" --weights auto --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2"
    # The ReSET rule alone (no top-p): the rule's share of ReSET + top-p's cost.
    run "$nv" --weights auto --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2 top_p=1"
    run "$bf" --weights bf16 --prompt-tokens 1024 --sequences 1 --tokens 64 --repeat 2
    run "$nv" --weights auto --prompt-tokens 32000 --sequences 1 --kv-cache fp8 --tokens 32 --repeat 1
    # The issue's prefill figure is at 2k prompts.
    run "$nv" --weights auto --prompt-tokens 2048 --sequences 1 --tokens 16 --repeat 3
    echo "commit $git_commit" >> "$out/decode_grid.log"
    exit 0
fi
run "$nv" --weights auto --prompt-tokens 1024,8192 --sequences 1,4,8 --kv-cache bf16,fp8 --tokens 64 --repeat 2
run "$nv" --weights w4a4 --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2
run "$nv" --weights auto --lm-head nvfp4 --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2
run "$nv" --weights auto --prompt-tokens 1024 --sequences 1 --compare-eager --tokens 64 --repeat 2
run "$nv" --weights auto --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2"
run "$nv" --weights auto --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2 --policy "reset t_low=0.6 tau0=1.2 top_k=20 top_p=0.95"
run "$bf" --weights bf16 --prompt-tokens 1024 --sequences 1,8 --tokens 64 --repeat 2
run "$nv" --weights auto --prompt-tokens 32000 --sequences 1 --kv-cache bf16,fp8 --tokens 32 --repeat 1
run "$nv" --weights auto --prompt-tokens 2048 --sequences 1 --tokens 16 --repeat 3  # the issue's prefill figure
echo "commit $git_commit" >> "$out/decode_grid.log"
