#!/usr/bin/env python3
"""What `reset serve` adds to a decode step, on the device: tokens/s as an HTTP client sees them.

    serve_bench.py RESET_BINARY MODEL_DIR --out FILE.jsonl [--rounds 3] [--tokens 256]
                   [--prompt-tokens 1024] [--backend cuda]

Starts `reset serve MODEL_DIR --parallel 8`, then per round, with a prompt of random token ids (a
new first id each round, so no prompt is cached unless a case says so), greedy, ignore_eos:
  - "stream n=1": a streamed completion; the time to the first token, the ms per step from the
    first token's chunk to the last, and the median gap between chunks;
  - "stream n=8": eight samples of one prompt (sampled, seed fixed);
  - "cached": the same prompt again: its time to the first token prefills one token;
  - "whole n=1": one response, not streamed: (total - time to first token) / (tokens - 1) is not
    observable, so tokens / total is reported;
  - "logprobs": top_logprobs 20, which needs a session of another shape (made on that request).
Correctness first: a streamed and a whole greedy answer must be `reset generate`'s text for the same
prompt on the same backend.  Standard library only (the GPU machine has no `openai` package).
Each case is one JSON line in --out with the server's startup time, the device and the settings.
"""
import argparse
import http.client
import json
import random
import re
import statistics
import subprocess
import sys
import threading
import time


def start_server(binary, model, backend, context):
    t0 = time.time()
    proc = subprocess.Popen([binary, "serve", model, "--port", "0", "--backend", backend, "--parallel", "8",
                             "--context", str(context)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines, port = [], None
    for line in proc.stderr:
        lines.append(line.rstrip())
        m = re.search(r"on http://127\.0\.0\.1:(\d+)/v1", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        sys.exit("the server did not start:\n" + "\n".join(lines))
    threading.Thread(target=lambda: [lines.append(l.rstrip()) for l in proc.stderr], daemon=True).start()
    return proc, port, time.time() - t0, lines


def post(port, path, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.perf_counter()
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    if not body.get("stream"):
        data = json.loads(response.read())
        conn.close()
        if response.status != 200:
            sys.exit(f"{path}: {response.status} {data}")
        return data, time.perf_counter() - t0, []
    # Server-sent events: the arrival time of each data line.
    arrivals, events, buffer = [], [], b""
    while True:
        chunk = response.read1(65536)
        if not chunk:
            break
        now = time.perf_counter() - t0
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            if block.startswith(b"data: "):
                payload = block[6:].decode()
                if payload != "[DONE]":
                    events.append(json.loads(payload))
                    arrivals.append(now)
    conn.close()
    if response.status != 200:
        sys.exit(f"{path}: {response.status} {events}")
    return events, time.perf_counter() - t0, arrivals


def streamed_text(events, n=1):
    texts = [""] * n
    for e in events:
        for c in e["choices"]:
            texts[c["index"]] += c.get("text", "")
    return texts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("model")
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--prompt-tokens", type=int, default=1024)
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    device = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                            text=True).stdout.strip() if args.backend == "cuda" else "cpu"
    proc, port, startup, lines = start_server(args.binary, args.model, args.backend, args.prompt_tokens +
                                              args.tokens + 64)
    out = open(args.out, "a")
    common = {"label": args.label, "device": device, "backend": args.backend, "prompt_tokens": args.prompt_tokens,
              "tokens": args.tokens, "server_start_s": round(startup, 3)}
    try:
        # Correctness: the server's greedy text is reset generate's.
        prompt = "The quick brown fox"
        reference = subprocess.run([args.binary, "generate", args.model, "--backend", args.backend, "--raw", prompt,
                                    "--policy", "greedy", "--max-tokens", "64", "--ignore-eos"], capture_output=True,
                                   text=True).stdout[:-1]
        body = {"prompt": prompt, "max_tokens": 64, "temperature": 0, "ignore_eos": True}
        whole, _, _ = post(port, "/v1/completions", body)
        events, _, _ = post(port, "/v1/completions", dict(body, stream=True))
        agree = whole["choices"][0]["text"] == reference and streamed_text(events)[0] == reference
        print("greedy text: server (whole and streamed) equals reset generate:", agree)
        out.write(json.dumps(dict(common, case="agreement", agree=agree)) + "\n")

        rng = random.Random(0)
        for r in range(args.rounds):
            ids = [rng.randrange(100, 600) for _ in range(args.prompt_tokens)]  # in every vocabulary here
            base = {"prompt": ids, "max_tokens": args.tokens, "temperature": 0, "ignore_eos": True}
            cases = [("stream n=1", dict(base, stream=True)),
                     ("cached", dict(base, stream=True)),
                     ("stream n=8", dict(base, stream=True, n=8, temperature=1.0, seed=1,
                                         prompt=[ids[0] + 1] + ids[1:])),
                     ("whole n=1", dict(base, prompt=[ids[0] + 2] + ids[1:])),
                     ("logprobs", dict(base, stream=True, logprobs=20, prompt=[ids[0] + 3] + ids[1:])),
                     ("stream n=1 after", dict(base, stream=True, prompt=[ids[0] + 4] + ids[1:]))]
            for name, request in cases:
                result, total, arrivals = post(port, "/v1/completions", request)
                row = dict(common, case=name, round=r + 1, total_s=round(total, 4))
                if arrivals:
                    # A chunk per sample and token, except for a token that adds no text yet (a piece of a
                    # character): the span from the first step's chunks to the last, over the steps between.
                    n = request.get("n", 1)
                    span = arrivals[-1] - arrivals[n - 1]
                    row.update(first_token_s=round(arrivals[0], 4), chunks=len(arrivals),
                               ms_per_step=round(1000 * span / (args.tokens - 1), 4),
                               tokens_per_s=round(n * (args.tokens - 1) / span, 1))
                    if n == 1:
                        row["ms_gap_median"] = round(1000 * statistics.median(
                            b - a for a, b in zip(arrivals, arrivals[1:])), 4)
                else:
                    row.update(tokens_per_s=round(args.tokens / total, 1))
                print(row)
                out.write(json.dumps(row) + "\n")
    finally:
        proc.terminate()
        proc.wait(60)
        out.close()
    for line in lines[-8:]:
        print(line)


if __name__ == "__main__":
    main()
