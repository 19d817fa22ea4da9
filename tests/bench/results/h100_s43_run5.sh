#!/usr/bin/env bash
# Session 43, run 5 (H100): `reset serve` making each chunk's JSON on the writer thread
# (the decode loop queues a copy of the step; the choice's text, logprobs and the chunk are made
# where the event is written, samples/reset/serve.cpp) against c351589's server, which made the
# chunk's JSON in the decode loop (reset-a, relinked against the same library), on a random
# Qwen3-8B-shape NVFP4 checkpoint with the real Qwen3 tokenizer, CUDA backend.
#  1. `reset bench decode` (1k prompt, 256 tokens, batch 1 and 8, greedy): the library's own step
#     time, before and after the servers, in the same run.
#  2. tests/bench/serve_bench.py, 3 rounds each, alternating: a, b, a, b.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset", plus bin/reset-a), COMMIT,
# build-tokenizer/qwen3 (copied from ../shared/data/tokenizers/qwen3).
source tests/bench/results/start_device_run.sh
R=$PWD/build-bundle/bin/reset
OLD=$PWD/build-bundle/bin/reset-a
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/q8 > /tmp/checkpoint.log 2>&1
echo "checkpoint rc $? at $SECONDS s"
cp build-tokenizer/qwen3/* /tmp/q8/
bench() {
    timeout 200 "$R" bench decode /tmp/q8 --backend cuda --prompt-tokens 1024 --sequences 1,8 --tokens 256 \
        --repeat 3 --json 2>/dev/null | sed "s/^{/{\"when\": \"$1\", /" >> "$OUT/h100_serve_bench_decode_s43_run5.jsonl"
    echo "bench $1 rc $? at $SECONDS s"
}
echo "== 1. reset bench decode (before)"
bench before
for pass in 1 2; do
    for variant in a b; do
        binary=$R; [ $variant = a ] && binary=$OLD
        echo "== 2. serve_bench.py: $variant, pass $pass"
        timeout 300 python3 tests/bench/serve_bench.py "$binary" /tmp/q8 --out "$OUT/h100_serve_s43_run5.jsonl" \
            --rounds 3 --tokens 256 --prompt-tokens 1024 --backend cuda --label "$variant $pass"
        echo "serve_bench $variant $pass rc $? at $SECONDS s"
    done
done
echo "== 1. reset bench decode (after)"
bench after
python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
for b in (json.loads(l) for l in open(f"{out}/h100_serve_bench_decode_s43_run5.jsonl")):
    print({k: b.get(k) for k in ("when", "sequences", "ms_per_step", "tokens_per_s")})
rows = [json.loads(l) for l in open(f"{out}/h100_serve_s43_run5.jsonl")]
for case in ("stream n=1", "stream n=1 after", "cached", "stream n=8", "whole n=1", "logprobs"):
    for variant in ("a", "b"):
        r = [x for x in rows if x.get("case") == case and x["label"].startswith(variant)]
        if r:
            print(f"{case:18} {variant:7}", {k: round(statistics.median(x[k] for x in r), 4)
                  for k in ("ms_per_step", "tokens_per_s", "first_token_s") if r[0].get(k) is not None},
                  "n", len(r))
print("agreement", [x["agree"] for x in rows if x.get("case") == "agreement"])
PY
echo "done at $SECONDS s"
