#!/usr/bin/env bash
# Session 40, run 1 (H100): `reset serve` on the CUDA backend, a random Qwen3-8B-shape NVFP4
# checkpoint with the real Qwen3 tokenizer and chat template.
#  1. `reset bench decode` (1k prompt, 256 tokens, batch 1 and 8, greedy): the library's own
#     step time, before and after the server, in the same run.
#  2. tests/bench/serve_bench.py: the server's greedy text against `reset generate` (whole and
#     streamed), then 3 rounds of streamed and whole completions at a 1k prompt, 256 tokens, as an
#     HTTP client sees them (time to the first token, ms per step, tokens/s), a cached prompt, n=8,
#     and top_logprobs 20 (a new session shape, made on that request).
#  3. A chat request through the Qwen3 template (reasoning split, usage) and the server's log.
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), COMMIT, build-tokenizer/qwen3 (copied from
# ../shared/data/tokenizers/qwen3).
source tests/bench/results/start_device_run.sh
R=$PWD/build-bundle/bin/reset
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/q8 > /tmp/checkpoint.log 2>&1
cp build-tokenizer/qwen3/* /tmp/q8/
echo "checkpoint rc $? at $SECONDS s"
bench() {
    timeout 200 "$R" bench decode /tmp/q8 --backend cuda --prompt-tokens 1024 --sequences 1,8 --tokens 256 \
        --repeat 3 --json 2>/dev/null | sed "s/^{/{\"when\": \"$1\", /" >> "$OUT/h100_serve_bench_decode_s40_run1.jsonl"
    echo "bench $1 rc $? at $SECONDS s"
}
echo "== 1. reset bench decode (before)"
bench before
echo "== 2. serve_bench.py"
timeout 400 python3 tests/bench/serve_bench.py "$R" /tmp/q8 --out "$OUT/h100_serve_s40_run1.jsonl" --rounds 3 \
    --tokens 256 --prompt-tokens 1024 --backend cuda --label "qwen3-8b nvfp4"
echo "serve_bench rc $? at $SECONDS s"
echo "== 3. a chat request"
"$R" serve /tmp/q8 --backend cuda --port 18080 --context 4096 > /dev/null 2> /tmp/serve.log &
server=$!
for i in $(seq 1 120); do grep -q "on http" /tmp/serve.log && break; sleep 0.5; done
curl -s localhost:18080/v1/chat/completions -d '{"messages": [{"role": "user", "content": "Why is the sky blue?"}],
     "max_tokens": 64, "temperature": 0}' | python3 -c '
import json, sys
r = json.load(sys.stdin)
m = r["choices"][0]["message"]
print("chat:", r["object"], r["usage"], r["choices"][0]["finish_reason"],
      "reasoning", None if m.get("reasoning_content") is None else len(m["reasoning_content"]), "content", len(m["content"]))'
kill -TERM $server; wait $server; echo "server exit $?"
cat /tmp/serve.log
echo "== 1. reset bench decode (after)"
bench after
python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
bench = [json.loads(l) for l in open(f"{out}/h100_serve_bench_decode_s40_run1.jsonl")]
for b in bench:
    print({k: b.get(k) for k in ("when", "sequences", "ms_per_step", "tokens_per_s", "prefill_tokens_per_s")})
rows = [json.loads(l) for l in open(f"{out}/h100_serve_s40_run1.jsonl")]
for case in ("stream n=1", "stream n=1 after", "cached", "stream n=8", "whole n=1", "logprobs"):
    r = [x for x in rows if x.get("case") == case]
    if r:
        print(case, {k: statistics.median(x[k] for x in r) for k in ("ms_per_step", "tokens_per_s", "first_token_s",
                                                                      "total_s") if r[0].get(k) is not None})
PY
echo "done at $SECONDS s"
