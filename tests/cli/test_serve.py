#!/usr/bin/env python3
"""`reset serve`, the OpenAI-compatible HTTP server, on the embedded default model.

    test_serve.py RESET_BINARY SOURCE_DIR

The server is driven by the `openai` Python package (OpenAI's own client, an
independent implementation of the protocol) and by raw HTTP for what a client
library hides (status codes, error bodies, the event stream, a client that
goes away).  What the server returns is compared with `reset generate` on the
same prompt: the server maps a protocol onto the library, so the library's
own command is the reference for the text, and the client for the protocol.

The default model (models/default, a 4.3M-parameter model trained to reason in
<think>...</think> before a \\boxed{} answer) makes the reasoning split
observable; the CPU backend keeps every run identical on any machine.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import openai
from prometheus_client.parser import text_string_to_metric_families

BINARY, SOURCE = sys.argv[1], sys.argv[2]
MODEL = os.path.join(SOURCE, "models/default")
TMP = tempfile.mkdtemp(prefix="reset-serve-")
failures = []
PROBLEM = ("Tom has 25 tickets. Tom ends up with 9 times as many tickets. Then Tom gives away 30 tickets. "
           "How many tickets does Tom have now?")
problem = [{"role": "user", "content": PROBLEM}]
TOOLS = [{"type": "function", "function": {
    "name": "add", "description": "Add two numbers.",
    "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number", "default": 1.0}},
                   "required": ["a"]}}}]


def check(name, condition, detail=""):
    print(("ok: " if condition else "FAIL: ") + name)
    if not condition:
        failures.append(name)
        print("   ", str(detail)[-1500:])


class Server:
    """A `reset serve` process on a free port; its stderr is collected line by line."""

    def __init__(self, *args, model=MODEL):
        self.proc = subprocess.Popen([BINARY, "serve", model, "--port", "0", "--backend", "cpu", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=dict(os.environ, NO_COLOR="1"))
        self.lines = []
        self.port = None
        ready = threading.Event()

        def drain():
            for line in self.proc.stderr:
                self.lines.append(line.rstrip("\n"))
                m = re.search(r"on http://127\.0\.0\.1:(\d+)/v1", line)
                if m:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=drain, daemon=True)
        self.reader.start()
        ready.wait(60)
        if self.port is None:
            raise RuntimeError("the server did not start: " + "\n".join(self.lines))
        self.client = openai.OpenAI(base_url=f"http://127.0.0.1:{self.port}/v1", api_key="unused", max_retries=0,
                                    timeout=120)

    def request(self, method, path, body=None, headers=None, raw=None):
        """(status, parsed JSON body or text)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        text = response.read().decode("utf-8", "replace")
        conn.close()
        try:
            return response.status, json.loads(text)
        except ValueError:
            return response.status, text

    def events(self, path, body):
        """The data lines of a streamed response, parsed (the last is the string '[DONE]')."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.request("POST", path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        text = response.read().decode()
        conn.close()
        out = []
        for block in text.split("\n\n"):
            if block.startswith("data: "):
                payload = block[len("data: "):]
                out.append(payload if payload == "[DONE]" else json.loads(payload))
        return response.status, response.getheader("Content-Type"), out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        return self.proc.returncode


def scrape(server):
    """GET /metrics read by prometheus_client's parser (an independent reader of the text format):
    (status, content type, {(sample name, labels other than model_name): value}, model names seen)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("GET", "/metrics")
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    values, models = {}, set()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            models.add(sample.labels.get("model_name"))
            labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "model_name"))
            values[(sample.name, labels)] = sample.value
    return response.status, response.getheader("Content-Type"), values, models


def http_exchange(port, method, path, headers=None, body=None):
    """(status, {header name lower-cased: value}, body text) of one raw HTTP exchange."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                 headers={"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    text = response.read().decode("utf-8", "replace")
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


def generate(*args):
    p = subprocess.run([BINARY, "generate", MODEL, "--backend", "cpu", *args], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout[:-1]  # generate ends the answer with a newline


def split_reasoning(text):
    """The raw answer as the server should split it (Qwen3's template's newlines dropped)."""
    assert text.startswith("<think>"), text[:40]
    reasoning, _, content = text[len("<think>"):].partition("</think>")
    return reasoning.strip("\n"), content.lstrip("\n")


def error_of(status, body, code, needle, param=None, error_code=None):
    ok = (status == code and isinstance(body, dict) and "error" in body and needle in body["error"]["message"]
          and body["error"]["type"] == ("invalid_request_error" if code < 500 and code != 401 else
                                        "authentication_error" if code == 401 else "server_error"))
    if param is not None:
        ok = ok and body["error"]["param"] == param
    if error_code is not None:
        ok = ok and body["error"]["code"] == error_code
    return ok


server = Server("--parallel", "4", "--context", "512", "--served-model-name", "arith")
client = server.client
try:
    # --- the model list and health ---------------------------------------------------------------------
    status, body = server.request("GET", "/health")
    check("/health answers ok", status == 200 and body == {"status": "ok"}, body)
    models = client.models.list()
    check("/v1/models lists the served name and the context", [m.id for m in models.data] == ["arith"]
          and models.data[0].model_extra.get("max_model_len") == 512, models)
    check("/v1/models/arith", client.models.retrieve("arith").id == "arith")

    # --- a greedy chat answer: the library's text, split into reasoning and answer -----------------------
    reference = generate(PROBLEM, "--policy", "greedy", "--max-tokens", "400")
    want_reasoning, want_content = split_reasoning(reference)
    answer = client.chat.completions.create(model="arith", messages=[{"role": "user", "content": PROBLEM}],
                                            temperature=0, max_tokens=400)
    choice = answer.choices[0]
    check("greedy chat: the answer is reset generate's, after </think>",
          choice.message.content == want_content and "\\boxed{" in want_content, (choice.message.content, reference))
    check("greedy chat: the reasoning inside <think> is reasoning_content",
          choice.message.model_extra.get("reasoning_content") == want_reasoning and len(want_reasoning) > 50,
          choice.message)
    check("greedy chat: finish_reason stop, usage counts", choice.finish_reason == "stop"
          and answer.usage.prompt_tokens > 20 and answer.usage.completion_tokens > 50
          and answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens
          and answer.object == "chat.completion" and answer.id.startswith("chatcmpl-")
          and answer.model == "arith", answer)
    prompt_tokens = answer.usage.prompt_tokens

    # --- streamed: the same text in deltas, then usage, then [DONE] ---------------------------------------
    stream = client.chat.completions.create(model="arith", messages=[{"role": "user", "content": PROBLEM}],
                                            temperature=0, max_tokens=400, stream=True,
                                            stream_options={"include_usage": True})
    reasoning, content, finishes, usage, roles, chunks = "", "", [], None, [], 0
    for chunk in stream:
        chunks += 1
        if chunk.usage is not None:
            usage = chunk.usage
        for c in chunk.choices:
            if c.delta.role:
                roles.append(c.delta.role)
            content += c.delta.content or ""
            reasoning += (c.delta.model_extra or {}).get("reasoning_content") or ""
            if c.finish_reason:
                finishes.append(c.finish_reason)
    check("streamed chat: the deltas add up to the answer and its reasoning",
          content == want_content and reasoning == want_reasoning, (content, reasoning))
    check("streamed chat: one role, one finish_reason, the usage last",
          roles == ["assistant"] and finishes == ["stop"] and usage is not None
          and usage.completion_tokens == answer.usage.completion_tokens and chunks > 50, (roles, finishes, usage))
    status, content_type, events = server.events("/v1/chat/completions", {
        "messages": [{"role": "user", "content": PROBLEM}], "temperature": 0, "max_tokens": 3, "stream": True})
    check("the event stream: text/event-stream, chat.completion.chunk objects, ends with [DONE]",
          status == 200 and content_type.startswith("text/event-stream") and events[-1] == "[DONE]"
          and all(e["object"] == "chat.completion.chunk" for e in events[:-1])
          and events[-2]["choices"][0]["finish_reason"] == "length", events)

    # --- vLLM's thinking_token_budget: reset generate --think-budget's answer ------------------------------
    budget_ref = split_reasoning(generate(PROBLEM, "--policy", "greedy", "--max-tokens", "120", "--think-budget", "12"))
    budgeted = client.chat.completions.create(model="arith", messages=problem, temperature=0, max_tokens=120,
                                              extra_body={"thinking_token_budget": 12})
    m = budgeted.choices[0].message
    check("thinking_token_budget: the reasoning closed after 12 tokens, then the answer, as reset generate's",
          (m.model_extra.get("reasoning_content"), m.content) == budget_ref and len(budget_ref[1]) > 20
          and budgeted.usage.completion_tokens == 120, (m, budget_ref))
    stream = client.chat.completions.create(model="arith", messages=problem, temperature=0, max_tokens=120,
                                            stream=True, extra_body={"thinking_token_budget": 12})
    parts = ["", ""]
    for chunk in stream:
        for c in chunk.choices:
            parts[0] += (c.delta.model_extra or {}).get("reasoning_content") or ""
            parts[1] += c.delta.content or ""
    check("thinking_token_budget streamed: the same parts", tuple(parts) == budget_ref, parts)
    zero = client.chat.completions.create(model="arith", messages=problem, temperature=0, max_tokens=20,
                                          extra_body={"thinking_token_budget": 0}).choices[0].message
    check("thinking_token_budget 0: no reasoning at all", zero.model_extra.get("reasoning_content") is None
          and "</think>" not in zero.content and zero.content, zero)

    # --- thinking off, and the reasoning left in the text ----------------------------------------------------
    off = client.chat.completions.create(model="arith", messages=[{"role": "user", "content": PROBLEM}],
                                         temperature=0, max_tokens=40,
                                         extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    check("enable_thinking false: the template's empty <think></think> is in the prompt, no reasoning comes back",
          off.usage.prompt_tokens > prompt_tokens and off.choices[0].message.model_extra.get("reasoning_content")
          is None and "<think>" not in off.choices[0].message.content, off)

    # --- sampling: seeded answers repeat; the prompt cache does not change them ------------------------------
    # top_p 1: the model's generation_config.json keeps 0.95, which on this confident model leaves one
    # token at most steps.
    def sampled(messages, seed, temperature=1.5, **extra):
        if temperature is not None:
            extra["temperature"] = temperature
        return client.chat.completions.create(model="arith", messages=messages, seed=seed, top_p=1,
                                              max_tokens=200, **extra)

    # A request the model was not trained for, so that its tokens are uncertain and seeds matter (on
    # its own problems it is all but certain, whatever the temperature).
    first = [{"role": "user", "content": "Write a poem about the sea."}]
    a = sampled(first, 7)
    b = sampled(first, 7)
    c = sampled(first, 8)
    def choice_text(c):
        return (c.message.model_extra.get("reasoning_content") or "") + c.message.content

    def text_of(r):
        return choice_text(r.choices[0])

    check("the same seed gives the same answer", text_of(a) == text_of(b), (text_of(a), text_of(b)))
    check("another seed gives another answer", text_of(a) != text_of(c))
    check("the second identical request reuses the cached prompt (usage.prompt_tokens_details.cached_tokens)",
          b.usage.prompt_tokens_details.cached_tokens == b.usage.prompt_tokens - 1, b.usage)
    follow = first + [{"role": "assistant", "content": a.choices[0].message.content,
                       "reasoning_content": a.choices[0].message.model_extra.get("reasoning_content")},
                      {"role": "user", "content": "Tom has 6 pens. Tom gets 7 more pens. How many pens does Tom have?"}]
    warm = sampled(follow, 11)
    sampled([{"role": "system", "content": "x"}, {"role": "user", "content": "Ann has 3 cups."}], 1)
    cold = sampled(follow, 11)
    check("a conversation's next turn prefills only the new message",
          warm.usage.prompt_tokens_details.cached_tokens > a.usage.prompt_tokens - 5
          and cold.usage.prompt_tokens_details.cached_tokens < 5, (warm.usage, cold.usage))
    check("an answer does not depend on what the session held before", text_of(warm) == text_of(cold))

    # A session left holding exactly the start of the next prompt (a one-token answer is not run through
    # the model) is cut back too: its sampler starts over, as on a cold session.
    def seeded_completion(prompt):
        return client.completions.create(model="arith", prompt=prompt, temperature=1.5, top_p=1, seed=3,
                                         max_tokens=30)

    start = "Write a poem about the sea."
    client.completions.create(model="arith", prompt=start, temperature=1.5, top_p=1, seed=9, max_tokens=1)
    held_warm = seeded_completion(start + " And the moon.")
    client.completions.create(model="arith", prompt="Ann", max_tokens=1)
    held_cold = seeded_completion(start + " And the moon.")
    check("a prompt that continues what the session held exactly: the same answer as cold",
          held_warm.choices[0].text == held_cold.choices[0].text
          and held_warm.usage.prompt_tokens_details.cached_tokens > held_cold.usage.prompt_tokens_details.cached_tokens,
          (held_warm, held_cold))

    # --- parallel samples ------------------------------------------------------------------------------------
    three = sampled(first, 5, n=3)
    texts = [choice_text(c) for c in sorted(three.choices, key=lambda c: c.index)]
    again = [choice_text(c) for c in sorted(sampled(first, 5, n=3).choices, key=lambda c: c.index)]
    check("n=3: three choices, drawn apart, the same again with the seed",
          [c.index for c in three.choices] == [0, 1, 2] and len(set(texts)) >= 2 and texts == again, texts)
    status, events = server.events("/v1/chat/completions", {
        "messages": first, "temperature": 1.5, "top_p": 1, "seed": 5, "max_tokens": 200, "n": 3, "stream": True})[0::2]
    streamed = ["", "", ""]
    for e in events[:-1]:
        for c in e["choices"]:
            d = c["delta"]
            streamed[c["index"]] += (d.get("reasoning_content") or "") + (d.get("content") or "")
    check("n=3 streamed: each choice's deltas add up to its answer", streamed == texts, (streamed, texts))

    # --- the ReSET policy --------------------------------------------------------------------------------------
    reset_a = sampled(first, 3, None, extra_body={"policy": "reset t_low=0.6 tau0=1.2"})
    reset_b = sampled(first, 3, None, extra_body={"policy": "reset t_low=0.6 tau0=1.2"})
    reset_c = sampled(first, 4, None, extra_body={"policy": "reset t_low=0.6 tau0=1.2"})
    check("policy: ReSET sampling, seeded, repeats", text_of(reset_a) == text_of(reset_b)
          and text_of(reset_a) != text_of(reset_c), text_of(reset_a))

    # --- completions: stops, lengths, ids, echo, logprobs, logit_bias -----------------------------------------
    raw = "<|im_start|>user\n" + PROBLEM + "<|im_end|>\n<|im_start|>assistant\n"
    full = client.completions.create(model="arith", prompt=raw, temperature=0, max_tokens=300)
    full_text = full.choices[0].text
    check("a greedy completion is the chat answer's raw text", full_text == reference and
          full.choices[0].finish_reason == "stop" and full.object == "text_completion", (full_text, reference))
    cut = full_text.index(" = ", 40)
    stopped = client.completions.create(model="arith", prompt=raw, temperature=0, max_tokens=300,
                                        stop=[" = ", "never"])
    check("stop: the text ends before the first stop string, named by vLLM's stop_reason",
          stopped.choices[0].text == full_text[:cut] and stopped.choices[0].finish_reason == "stop"
          and stopped.choices[0].model_extra["stop_reason"] == " = ", stopped.choices[0])
    check("an end-of-generation id is no stop_reason", full.choices[0].model_extra["stop_reason"] is None)
    short = client.completions.create(model="arith", prompt=raw, temperature=0, max_tokens=5)
    check("max_tokens: five tokens, finish_reason length", short.usage.completion_tokens == 5
          and short.choices[0].finish_reason == "length" and full_text.startswith(short.choices[0].text),
          short)
    ids = [int(x) for x in subprocess.run([BINARY, "tokenize", MODEL, "--special", raw], capture_output=True,
                                          text=True).stdout.split()]
    by_ids = client.completions.create(model="arith", prompt=ids, temperature=0, max_tokens=300)
    check("a prompt of token ids", by_ids.choices[0].text == full_text and by_ids.usage.prompt_tokens == len(ids))
    echoed = client.completions.create(model="arith", prompt=raw, temperature=0, max_tokens=5, echo=True)
    check("echo puts the prompt before the answer", echoed.choices[0].text == raw + short.choices[0].text)
    status, events = server.events("/v1/completions", {"prompt": raw, "temperature": 0, "max_tokens": 300,
                                                       "stream": True})[0::2]
    check("a streamed completion adds up to the same text",
          "".join(c["text"] for e in events[:-1] for c in e["choices"]) == full_text and events[-1] == "[DONE]")

    # Log-probabilities against reset generate's trace of the same greedy answer.
    trace = subprocess.run([BINARY, "generate", MODEL, "--backend", "cpu", "--raw", raw, "--policy", "greedy",
                            "--max-tokens", "8", "--jsonl", "-", "--top-logprobs", "3"],
                           capture_output=True, text=True).stdout.splitlines()
    trace = [json.loads(line) for line in trace]
    lp = client.completions.create(model="arith", prompt=raw, temperature=0, max_tokens=8, logprobs=3).choices[0]
    check("completions logprobs: each token's log-probability is the library's",
          len(lp.logprobs.token_logprobs) == 8 and
          all(abs(x - t["logprob"]) < 1e-6 for x, t in zip(lp.logprobs.token_logprobs, trace)),
          (lp.logprobs.token_logprobs, [t["logprob"] for t in trace]))
    check("completions logprobs: three alternatives per token, the chosen one first (greedy)",
          all(len(top) == 3 and max(top.values()) == top[tok] for top, tok in
              zip(lp.logprobs.top_logprobs, lp.logprobs.tokens)) and lp.logprobs.text_offset[0] == 0)
    chat_lp = client.chat.completions.create(model="arith", messages=problem, temperature=0, max_tokens=8,
                                             logprobs=True, top_logprobs=2).choices[0].logprobs.content
    check("chat logprobs: token, logprob, bytes and top_logprobs per token, as the trace",
          len(chat_lp) == 8 and all(abs(e.logprob - t["logprob"]) < 1e-6 and len(e.top_logprobs) == 2
                                    and bytes(e.bytes).decode("utf-8", "replace") == e.token
                                    and e.top_logprobs[0].logprob >= e.top_logprobs[1].logprob
                                    for e, t in zip(chat_lp, trace)), chat_lp)
    no_lp = client.chat.completions.create(model="arith", messages=problem, temperature=0, max_tokens=2)
    check("no logprobs unless asked", no_lp.choices[0].logprobs is None)
    first_piece = lp.logprobs.tokens[0]
    tom = [int(x) for x in subprocess.run([BINARY, "tokenize", MODEL, "Tom"], capture_output=True,
                                          text=True).stdout.split()]
    assert len(tom) == 1, tom
    forced_id = tom[0]
    forced = client.completions.create(model="arith", prompt=raw, temperature=0, max_tokens=3,
                                       logit_bias={str(forced_id): 100})
    check("logit_bias +100 makes every greedy token that token",
          forced.choices[0].text == "Tom" * 3 and first_piece != "Tom", forced.choices[0].text)
    status, events = server.events("/v1/completions", {"prompt": raw, "temperature": 0, "max_tokens": 3,
                                                       "logit_bias": {str(forced_id): 100},
                                                       "stop_token_ids": [forced_id], "stream": True})[0::2]
    last = events[-2]["choices"][0]
    check("stop_token_ids: the token ends the answer, its text kept (not special), stop_reason its id",
          "".join(c["text"] for e in events[:-1] for c in e["choices"]) == "Tom" and last["finish_reason"] == "stop"
          and last["stop_reason"] == forced_id, events)

    # --- vLLM's /tokenize and /detokenize --------------------------------------------------------------------
    status, tokens = server.request("POST", "/tokenize", {"prompt": raw})
    check("/tokenize: reset tokenize's ids, their count and the context",
          status == 200 and tokens == {"count": len(ids), "max_model_len": 512, "tokens": ids}, tokens)
    status, chat_tokens = server.request("POST", "/tokenize", {"messages": problem})
    check("/tokenize of messages: the chat request's prompt",
          status == 200 and chat_tokens["tokens"] == ids and chat_tokens["count"] == prompt_tokens, chat_tokens)
    status, text = server.request("POST", "/detokenize", {"tokens": ids})
    check("/detokenize gives the text back", status == 200 and text == {"prompt": raw}, text)
    status, reply = server.request("POST", "/detokenize", {"tokens": [1, -2]})
    check("/detokenize refuses an id outside the vocabulary", error_of(status, reply, 400, "ids must be", "tokens"),
          reply)

    # --- tool calling: the tools and calls in the prompt as transformers renders them -------------------------
    # (the answers' calls are read by serve_request.cpp's parser, tested on known answers in
    # tests/cli/test_serve_choices.cpp: this model was not trained to call tools.)
    history = [{"role": "user", "content": "Add 2 and 3."},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]},
               {"role": "tool", "tool_call_id": "call_1", "content": "5"},
               {"role": "user", "content": PROBLEM}]
    try:
        import transformers  # noqa: F401 (the reference renderer)
        sys.path.insert(0, os.path.join(SOURCE, "tests/text"))
        import chat_reference
        renderer = chat_reference.renderer(json.load(open(os.path.join(MODEL, "tokenizer_config.json"))))
    except ImportError as e:
        renderer = None
        print(f"SKIP the tool prompts against transformers: {e}")
    if renderer:
        rendered = renderer.apply_chat_template([dict(m, content=m["content"] or "") for m in history], tools=TOOLS,
                                                tokenize=False, add_generation_prompt=True)
        status, by_server = server.request("POST", "/tokenize", {"messages": history, "tools": TOOLS})
        status2, by_text = server.request("POST", "/tokenize", {"prompt": rendered, "add_special_tokens": False})
        check("tools, a tool call and its result: the prompt is transformers' rendering of them",
              status == 200 and status2 == 200 and by_server["tokens"] == by_text["tokens"]
              and "<tools>" in rendered and "<tool_call>" in rendered and "<tool_response>" in rendered,
              (by_server, by_text))
        # The tools take ~420 of this tokenizer's tokens: a short question, and 60 tokens of answer.
        short = [{"role": "user", "content": "Tom has 5 apples and buys 3 more. How many apples does Tom have?"}]
        short_text = renderer.apply_chat_template(short, tools=TOOLS, tokenize=False, add_generation_prompt=True)
        answer = client.chat.completions.create(model="arith", messages=short, tools=TOOLS, temperature=0,
                                                max_tokens=60)
        completion = client.completions.create(model="arith", prompt=short_text, temperature=0, max_tokens=60)
        raw_text = completion.choices[0].text
        if not raw_text.startswith("<think>"):  # so long a prompt is new to this model: it may not think
            want = (None, raw_text)
        elif "</think>" in raw_text:
            want = split_reasoning(raw_text)
        else:
            want = (raw_text[len("<think>"):].lstrip("\n"), "")
        message = answer.choices[0].message
        check("a chat with tools whose answer calls none: the answer to transformers' prompt, no calls",
              (message.model_extra.get("reasoning_content"), message.content) == want and not message.tool_calls
              and answer.choices[0].finish_reason == completion.choices[0].finish_reason
              and answer.usage.prompt_tokens == completion.usage.prompt_tokens > 400, (answer, completion))
    status, no_tools = server.request("POST", "/tokenize", {"messages": problem, "tools": TOOLS,
                                                            "tool_choice": "none"})
    check("tool_choice none: the tools are left out of the prompt", status == 200 and no_tools == chat_tokens,
          no_tools)

    # --- requests refused, each with OpenAI's error object ---------------------------------------------------
    chat = "/v1/chat/completions"
    msgs = [{"role": "user", "content": "hi"}]
    cases = [
        ("a body that is not JSON", chat, None, b"{not json", 400, "not valid JSON", None, None),
        ("a body that is not UTF-8", chat, None, b'{"messages": [{"role": "user", "content": "\xff"}]}', 400,
         "not valid JSON", None, None),
        ("a body that is not an object", chat, [1, 2], None, 400, "JSON object", None, None),
        ("no messages", chat, {"model": "arith"}, None, 400, "messages", "messages", None),
        ("an unknown model", chat, {"model": "gpt-4", "messages": msgs}, None, 404, "does not exist", "model",
         "model_not_found"),
        ("a function message (the API's older tool role)", chat, {"messages": [{"role": "function", "content": "x"}]},
         None, 400, "not served", None, None),
        ("an image part", chat, {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {
            "url": "http://x"}}]}]}, None, 400, "only text parts", None, None),
        ("a forced tool call", chat, {"messages": msgs, "tools": TOOLS, "tool_choice": "required"}, None, 400,
         "constrained decoding", "tool_choice", None),
        ("a tool without a name", chat, {"messages": msgs, "tools": [{"type": "function", "function": {}}]}, None,
         400, "must be {", "tools", None),
        ("tool calls on a user message", chat, {"messages": [{"role": "user", "content": "x", "tool_calls": []}]},
         None, 400, "an assistant message's array", "messages[0].tool_calls", None),
        ("a tool call without arguments (the library's check)", chat, {"messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "f"}}]}]},
         None, 400, 'has no "arguments"', "messages", None),
        ("a JSON schema", chat, {"messages": msgs, "response_format": {"type": "json_object"}}, None, 400,
         "response_format", "response_format", None),
        ("a temperature that is text", chat, {"messages": msgs, "temperature": "hot"}, None, 400,
         "must be a number", "temperature", None),
        ("top_p out of range (the library's check)", chat, {"messages": msgs, "top_p": 1.5}, None, 400, "top_p",
         None, None),
        ("n = 0", chat, {"messages": msgs, "n": 0}, None, 400, "must be in [1, 8]", "n", None),
        ("n above --parallel", chat, {"messages": msgs, "n": 5}, None, 400, "at most 4 samples", "n", None),
        ("a prompt longer than the context", chat, {"messages": [{"role": "user", "content": "7 " * 600}]}, None,
         400, "maximum context length is 512", "messages", "context_length_exceeded"),
        ("max_tokens beyond the context", chat, {"messages": msgs, "max_tokens": 600}, None, 400,
         "maximum context length is 512", "max_tokens", "context_length_exceeded"),
        ("max_tokens 0", chat, {"messages": msgs, "max_tokens": 0}, None, 400, "must be in", "max_tokens", None),
        ("a logit_bias id outside the vocabulary", chat, {"messages": msgs, "logit_bias": {"768": 1}}, None, 400,
         "no token id", "logit_bias", None),
        ("a logit_bias above 100", chat, {"messages": msgs, "logit_bias": {"5": 200}}, None, 400, "[-100, 100]",
         "logit_bias", None),
        ("seventeen stop strings", chat, {"messages": msgs, "stop": [str(i) for i in range(17)]}, None, 400,
         "at most 16", "stop", None),
        ("a thinking budget for two samples", chat, {"messages": msgs, "n": 2, "thinking_token_budget": 5}, None,
         400, "one sample per request", "thinking_token_budget", None),
        ("top_logprobs without logprobs", chat, {"messages": msgs, "top_logprobs": 2}, None, 400,
         "logprobs", "top_logprobs", None),
        ("top_logprobs above 20", chat, {"messages": msgs, "logprobs": True, "top_logprobs": 21}, None, 400,
         "must be in [0, 20]", "top_logprobs", None),
        ("an unknown policy", chat, {"messages": msgs, "policy": "bogus"}, None, 400, "bogus", "policy", None),
        ("a temperature with the ReSET policy", chat, {"messages": msgs, "policy": "reset", "temperature": 0.7},
         None, 400, "chooses the temperature", "temperature", None),
        ("stream_options without stream", chat, {"messages": msgs, "stream_options": {"include_usage": True}},
         None, 400, "stream", "stream_options", None),
        ("a prompt id outside the vocabulary", "/v1/completions", {"prompt": [1, 2, 9999]}, None, 400,
         "token ids must be", "prompt", None),
        ("two prompts in one request", "/v1/completions", {"prompt": ["a", "b"]}, None, 400, "one prompt", "prompt",
         None),
        ("best_of above n", "/v1/completions", {"prompt": "a", "best_of": 2}, None, 400, "must equal n", "best_of",
         None),
        ("echo with logprobs", "/v1/completions", {"prompt": "a", "echo": True, "logprobs": 1}, None, 400,
         "prompt's log-probabilities", "echo", None),
    ]
    for name, path, body, raw_body, code, needle, param, error_code in cases:
        status, reply = server.request("POST", path, body=body, raw=raw_body)
        check(f"refused: {name} ({code})", error_of(status, reply, code, needle, param, error_code),
              (status, reply))
    status, reply = server.request("POST", "/v1/completions", raw=b'{"prompt": "' + b"a" * (33 << 20) + b'"}')
    check("a body over 32 MiB is a 413 with an error object", error_of(status, reply, 413, "too large"),
          (status, str(reply)[:200]))
    status, reply = server.request("GET", "/v1/nothing")
    check("an unknown endpoint is a 404 with an error object", error_of(status, reply, 404, "no such endpoint"),
          (status, reply))
    try:
        client.chat.completions.create(model="arith", messages=msgs, max_tokens=600)
        check("the openai client sees a refusal as BadRequestError", False)
    except openai.BadRequestError as e:
        check("the openai client sees a refusal as BadRequestError", e.code == "context_length_exceeded", e)
    status, reply = server.request("GET", "/health")
    check("the server still serves after every refusal", status == 200)

    # --- requests at once take turns; a client that goes away stops its generation --------------------------
    results = [None] * 3

    def ask(i):
        results[i] = client.chat.completions.create(model="arith", messages=problem, temperature=0,
                                                    max_tokens=400).choices[0].message.content

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("three requests at once: each gets the whole answer", results == [want_content] * 3, results)

    sock = socket.create_connection(("127.0.0.1", server.port))
    request = json.dumps({"prompt": raw, "max_tokens": 400, "ignore_eos": True, "stream": True,
                          "temperature": 0}).encode()
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(request)).encode() + b"\r\n\r\n" + request)
    sock.recv(200)
    sock.close()
    deadline = time.time() + 20
    while time.time() < deadline and not any("went away" in l for l in server.lines):
        time.sleep(0.05)
    gone = [l for l in server.lines if "went away" in l]
    generated = int(re.search(r"(\d+) generated", gone[0]).group(1)) if gone else -1
    check("a stream whose client went away stops early (logged)", gone and 0 < generated < 400, server.lines[-3:])
    check("and the server serves the next request",
          client.chat.completions.create(model="arith", messages=problem, temperature=0,
                                         max_tokens=400).choices[0].message.content == want_content)

    # --- GET /metrics: what the requests between two scrapes did ------------------------------------------------
    status, kind, before, models = scrape(server)
    check("GET /metrics is Prometheus' text format, every sample labelled with the model's name",
          status == 200 and kind.startswith("text/plain; version=0.0.4") and models == {"arith"},
          (status, kind, models))
    check("the client that went away counts as an aborted choice",
          before.get(("reset:request_success_total", (("finished_reason", "abort"),)), 0) >= 1, before)
    whole = client.completions.create(model="arith", prompt=raw, max_tokens=8, temperature=0,
                                      extra_body={"ignore_eos": True})
    chunks = list(client.chat.completions.create(model="arith", messages=problem, max_tokens=5, n=2, seed=3,
                                                 stream=True, stream_options={"include_usage": True},
                                                 extra_body={"ignore_eos": True}))
    streamed = chunks[-1].usage
    status, _ = server.request("POST", "/v1/completions", {"prompt": "a", "temperature": -1})
    status2, kind, after, _ = scrape(server)

    def delta(name, **labels):
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    usages = [whole.usage, streamed]
    check("metrics: prompt, cached and generated tokens are the responses' usage",
          delta("reset:prompt_tokens_total") == sum(u.prompt_tokens for u in usages)
          and delta("reset:prefix_cache_hits_total") == sum(u.prompt_tokens_details.cached_tokens for u in usages)
          and delta("reset:generation_tokens_total") == sum(u.completion_tokens for u in usages) == 8 + 2 * 5,
          (usages, after))
    check("metrics: three choices ended by length, one refusal counted by its status",
          status == 400 and delta("reset:request_success_total", finished_reason="length") == 3
          and delta("reset:request_errors_total", status="400") == 1, after)
    check("metrics: one first token and one whole latency per request, a step per later token",
          delta("reset:time_to_first_token_seconds_count") == 2
          and delta("reset:e2e_request_latency_seconds_count") == 2
          and delta("reset:request_queue_time_seconds_count") == 2
          and delta("reset:inter_token_latency_seconds_count") == (8 - 1) + (5 - 1), after)
    buckets = sorted((float(dict(labels)["le"]), v) for (name, labels), v in after.items()
                     if name == "reset:inter_token_latency_seconds_bucket")
    check("metrics: a histogram's buckets are cumulative up to +Inf, which is its count",
          all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])) and buckets[-1][0] == float("inf")
          and buckets[-1][1] == after[("reset:inter_token_latency_seconds_count", ())]
          and after[("reset:inter_token_latency_seconds_sum", ())] > 0, buckets)
    check("metrics: nothing running or waiting once the responses are in",
          after[("reset:num_requests_running", ())] == 0 and after[("reset:num_requests_waiting", ())] == 0, after)
    # The last generation (the refusal never reached the session): 2 samples of the prompt and 5 tokens in a
    # session of 2 x 512 positions.  A sample's last token enters its context only if another step follows
    # (reset_session_tokens), so each holds the prompt and 4 or 5 tokens.
    held = after[("reset:kv_cache_usage_perc", ())] * 2 * 512
    check("metrics: the KV-cache usage is the tokens the session holds of its positions",
          2 * (streamed.prompt_tokens + 4) <= round(held) <= 2 * (streamed.prompt_tokens + 5)
          and abs(held - round(held)) < 1e-6, (held, streamed))
finally:
    rc = server.stop()
check("SIGTERM stops the server cleanly (exit 0, 'stopping' logged)",
      rc == 0 and any("stopping" in l for l in server.lines), (rc, server.lines[-3:]))
check("one log line per answered request",
      sum(1 for l in server.lines if re.match(r"reset serve: (chat|completion) n=\d", l)) >= 30, server.lines)

# --- options: an API key, the reasoning left in the text, DeepSeek-R1's template ---------------------------
keyed = Server("--api-key", "s3cret")
try:
    status, reply = keyed.request("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "a"}],
                                                                   "max_tokens": 1})
    check("--api-key: no key is a 401", error_of(status, reply, 401, "API key", None, "invalid_api_key"), reply)
    status, reply = keyed.request("GET", "/v1/models", headers={"Authorization": "Bearer wrong"})
    check("--api-key: a wrong key is a 401", status == 401)
    status, reply = keyed.request("GET", "/v1/models", headers={"Authorization": "Bearer s3cret"})
    check("--api-key: the key opens /v1", status == 200 and reply["data"][0]["id"] == "default", reply)
    status, _, values, _ = scrape(keyed)
    check("--api-key: /metrics stays open (as vLLM's), and counts the 401s",
          status == 200 and values.get(("reset:request_errors_total", (("status", "401"),))) == 2, values)
    check("--api-key: /health needs none", keyed.request("GET", "/health")[0] == 200)
    status, headers, _ = http_exchange(keyed.port, "GET", "/health", {"Origin": "https://ui.example"})
    check("without --allowed-origins a cross-origin request gets no CORS header",
          status == 200 and "access-control-allow-origin" not in headers, headers)
finally:
    keyed.stop()

# --- CORS: --allowed-origins ---------------------------------------------------------------------------------
p = subprocess.run([BINARY, "serve", MODEL, "--allowed-origins", "https://ui.example/"], capture_output=True,
                   text=True, timeout=60)
check("--allowed-origins with a path is refused before anything loads",
      p.returncode == 2 and "--allowed-origins: 'https://ui.example/' is not an origin" in p.stderr, p.stderr)
cors = Server("--api-key", "s3cret", "--allowed-origins", "https://ui.example,http://localhost:3000")
try:
    key = {"Authorization": "Bearer s3cret"}
    body = {"prompt": "2+2=", "max_tokens": 2, "temperature": 0}
    status, headers, _ = http_exchange(cors.port, "OPTIONS", "/v1/completions", {
        "Origin": "https://ui.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    check("CORS: a preflight from an allowed origin is a 204 that allows the method and headers, without the key",
          status == 204 and headers.get("access-control-allow-origin") == "https://ui.example"
          and headers.get("vary") == "Origin" and "POST" in headers.get("access-control-allow-methods", "")
          and headers.get("access-control-allow-headers") == "authorization, content-type", (status, headers))
    status, headers, text = http_exchange(cors.port, "POST", "/v1/completions",
                                          dict(key, Origin="http://localhost:3000"), body)
    check("CORS: an allowed origin's request gets its answer and the header naming that origin",
          status == 200 and headers.get("access-control-allow-origin") == "http://localhost:3000"
          and json.loads(text)["usage"]["completion_tokens"] == 2, (status, headers))
    status, headers, _ = http_exchange(cors.port, "POST", "/v1/completions", {"Origin": "https://ui.example"}, body)
    check("CORS: a refusal carries the header too (the page can read why)",
          status == 401 and headers.get("access-control-allow-origin") == "https://ui.example", (status, headers))
    status, headers, text = http_exchange(cors.port, "POST", "/v1/completions", dict(key, Origin="https://ui.example"),
                                          dict(body, stream=True))
    check("CORS: a stream carries the header",
          status == 200 and headers.get("access-control-allow-origin") == "https://ui.example"
          and text.rstrip().endswith("data: [DONE]"), (status, headers))
    status, headers, _ = http_exchange(cors.port, "POST", "/v1/completions", dict(key, Origin="https://evil.example"),
                                       body)
    preflight, preflight_headers, _ = http_exchange(cors.port, "OPTIONS", "/v1/completions", {
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    check("CORS: another origin gets no header, and its preflight is not answered",
          status == 200 and "access-control-allow-origin" not in headers and preflight != 204
          and "access-control-allow-origin" not in preflight_headers, (status, headers, preflight, preflight_headers))
finally:
    cors.stop()

plain = Server("--reasoning-format", "none")
try:
    r = plain.client.chat.completions.create(model="default", messages=[{"role": "user", "content": PROBLEM}],
                                             temperature=0, max_tokens=400)
    check("--reasoning-format none: the whole text is the content", r.choices[0].message.content == reference
          and "reasoning_content" not in r.choices[0].message.model_extra, r.choices[0].message)
finally:
    plain.stop()

# The same weights with DeepSeek-R1's template: its models begin with their reasoning whether or not
# they write <think> (vLLM's deepseek_r1 parser assumes the same), so an answer without </think> is
# all reasoning.
r1 = os.path.join(TMP, "r1")
os.mkdir(r1)
for f in ("config.json", "generation_config.json", "model.safetensors", "tokenizer.model"):
    shutil.copy(os.path.join(MODEL, f), r1)
config = json.load(open(os.path.join(MODEL, "tokenizer_config.json")))
config["chat_template"] = json.load(open(os.path.join(SOURCE, "tests/text/templates/deepseek_r1_distill.json")))[
    "chat_template"]
json.dump(config, open(os.path.join(r1, "tokenizer_config.json"), "w"))
deepseek = Server(model=r1)
try:
    r = deepseek.client.chat.completions.create(model="r1", messages=[{"role": "user", "content": PROBLEM}],
                                                temperature=0, max_tokens=12)
    raw_r1 = deepseek.client.completions.create(
        model="r1", temperature=0, max_tokens=12,
        prompt="<｜User｜>" + PROBLEM + "<｜Assistant｜>")
    check("DeepSeek-R1's template: an answer without </think> is all reasoning",
          r.choices[0].message.model_extra.get("reasoning_content") == raw_r1.choices[0].text.strip("\n")
          and r.choices[0].message.content == "" and "</think>" not in raw_r1.choices[0].text
          and r.usage.prompt_tokens == raw_r1.usage.prompt_tokens, (r, raw_r1))
    close = [int(x) for x in subprocess.run([BINARY, "tokenize", r1, "--special", "</think>"], capture_output=True,
                                            text=True).stdout.split()]
    closed = deepseek.client.chat.completions.create(model="r1", messages=problem, temperature=0, max_tokens=3,
                                                     logit_bias={str(close[0]): 100}).choices[0].message
    check("DeepSeek-R1's template: </think> ends the reasoning, what follows is the answer",
          len(close) == 1 and closed.model_extra.get("reasoning_content") is None
          and closed.content == "</think></think>", closed)
    status, reply = deepseek.request("POST", "/v1/chat/completions", {"messages": problem, "tools": TOOLS})
    check("DeepSeek-R1's template: tools are refused, the template renders none",
          error_of(status, reply, 400, "renders neither tools nor tool calls", "tools"), reply)
finally:
    deepseek.stop()

# --- the command line ---------------------------------------------------------------------------------------
p = subprocess.run([BINARY, "serve", MODEL, "--parallel", "9"], capture_output=True, text=True, timeout=60)
check("--parallel 9 is a usage error", p.returncode == 2 and "--parallel" in p.stderr, p.stderr)
p = subprocess.run([BINARY, "serve", MODEL, "--reasoning-format", "xml"], capture_output=True, text=True, timeout=60)
check("an unknown --reasoning-format is a usage error", p.returncode == 2 and "split or none" in p.stderr, p.stderr)
holder = socket.socket()
holder.bind(("127.0.0.1", 0))
holder.listen(1)
p = subprocess.run([BINARY, "serve", MODEL, "--backend", "cpu", "--port", str(holder.getsockname()[1])],
                   capture_output=True, text=True, timeout=60)
holder.close()
check("a port in use is one line and exit 1", p.returncode == 1 and "cannot listen" in p.stderr.splitlines()[-1]
      and p.stderr.splitlines()[-1].startswith("reset serve:"), p.stderr)
p = subprocess.run([BINARY, "serve", os.path.join(SOURCE, "tests/fixtures/models/qwen3-tied"), "--backend", "cpu"],
                   capture_output=True, text=True, timeout=60)
check("a model without a tokenizer is not served (one line, exit 1)",
      p.returncode == 1 and p.stderr.splitlines()[-1] == "reset serve: the model directory has no tokenizer "
      "(tokenizer.json or tokenizer.model)", p.stderr)
p = subprocess.run([BINARY, "serve", MODEL, "--backend", "cpu", "--context", "100000"], capture_output=True, text=True,
                   timeout=60)
check("a session the model cannot hold is refused at start, not at a request",
      p.returncode == 1 and p.stderr.splitlines()[-1].startswith("reset serve: cannot create a session: ")
      and "max_context" in p.stderr, p.stderr)
p = subprocess.run([BINARY, "serve", "--help"], capture_output=True, text=True, timeout=60)
check("serve --help", p.returncode == 0 and "/v1/chat/completions" in p.stdout)

shutil.rmtree(TMP, ignore_errors=True)
print(f"{len(failures)} failures" if failures else "all passed")
sys.exit(1 if failures else 0)
