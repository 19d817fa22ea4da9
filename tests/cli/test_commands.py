#!/usr/bin/env python3
"""The `reset` subcommands on fixture models, including their error paths.

    test_commands.py RESET_BINARY SOURCE_DIR

Every error must be one line on stderr and a non-zero exit code (1: the work
failed, 2: the command line is wrong), never a crash or an abort.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

BINARY, SOURCE = sys.argv[1], sys.argv[2]
CHAT = os.path.join(SOURCE, "tests/fixtures/chat-model")
NO_TOKENIZER = os.path.join(SOURCE, "tests/fixtures/models/qwen3-tied")
TMP = tempfile.mkdtemp(prefix="reset-cli-")
failures = []


def run(*args, stdin=None, env=None):
    full_env = dict(os.environ, NO_COLOR="1", **(env or {}))
    p = subprocess.run([BINARY, *args], input=stdin, capture_output=True, text=True, timeout=120, env=full_env)
    return p.returncode, p.stdout, p.stderr


def check(name, condition, detail=""):
    print(("ok: " if condition else "FAIL: ") + name)
    if not condition:
        failures.append(name)
        print("   ", detail[-1500:])


def check_error(name, args, code, needle, stdin=None, env=None):
    rc, out, err = run(*args, stdin=stdin, env=env)
    lines = [l for l in err.splitlines() if l.strip() and not l.startswith("loading ")]
    check(name, rc == code and len(lines) == 1 and needle in lines[0] and lines[0].startswith("reset"),
          f"rc={rc} stderr={err!r}")


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


# --- info and tokenize -----------------------------------------------------------
# Checks that name the backend, or load qwen3-tied (head_dim 24, which the CUDA kernels do not
# serve), pin --backend cpu; the others run on whatever AUTO picks (CUDA on a GPU machine).
rc, out, err = run("info", CHAT, "--backend", "cpu")
check("info names the architecture, format, backend and the recognised template",
      rc == 0 and "qwen3, 2 layers, hidden 64" in out and "bf16" in out and "backend       cpu" in out
      and "sentencepiece, 512 tokens" in out and "chat template Qwen3" in out, out + err)
rc, out, err = run("info", NO_TOKENIZER, "--backend", "cpu")
check("info on a model without a tokenizer", rc == 0 and "tokenizer     none" in out, out + err)
check("info shows the sampling a session starts with (qwen3-tied's generation_config.json)",
      "sampling      fixed T=0.6 top_p=0.95 top_k=20 seed=0" in out, out)
rc, out, err = run("info", NO_TOKENIZER, "--weights", "nvfp4", "--lm-head", "nvfp4", "--backend", "cpu")
check("--lm-head nvfp4 quantizes the lm_head too", rc == 0 and "lm_head nvfp4, 0 linears kept in BF16" in out,
      out + err)
rc, out, err = run("info", NO_TOKENIZER, "--weights", "nvfp4", "--backend", "cpu")
check("the lm_head stays BF16 by default", rc == 0 and "lm_head bf16, 1 linears kept in BF16" in out, out + err)
for fixture, producer in (("modelopt-qwen3", "ModelOpt"), ("ct-nvfp4-qwen3", "compressed-tensors"),
                          ("ct-nvfp4a16-head-qwen3", "compressed-tensors")):
    rc, out, err = run("info", os.path.join(SOURCE, "tests/fixtures/models", fixture), "--backend", "cpu")
    check(f"info names the NVFP4 checkpoint's producer ({fixture})",
          rc == 0 and f"weights       nvfp4 (w4a16) ({producer} checkpoint), lm_head " in out, out + err)
check("an NVFP4 lm_head read from the checkpoint",
      "lm_head nvfp4, 0 linears kept in BF16" in out, out)
rc, out, err = run("info", NO_TOKENIZER, "--weights", "nvfp4", "--backend", "cpu")
check("a BF16 checkpoint quantized on load names no producer", rc == 0 and "checkpoint)" not in out, out + err)

rc, out, err = run("tokenize", CHAT, "--special", "<|im_start|>user\nWhat is 2+3?<|im_end|>")
ids = [int(x) for x in out.split()]
check("tokenize parses special tokens", rc == 0 and ids[0] == 2 and ids[-1] == 3 and len(ids) > 5, out + err)
rc, out, err = run("tokenize", CHAT, "--pieces", "What is")
check("tokenize --pieces shows texts", rc == 0 and '"What"' in out and '" is"' in out, out)

# --- generate --------------------------------------------------------------------
rc, out, err = run("generate", CHAT, "What is 2+3?", "--max-tokens", "20", "--policy", "greedy")
rc2, out2, _ = run("generate", CHAT, "What is 2+3?", "--max-tokens", "20", "--policy", "greedy")
check("generate greedy is deterministic and non-empty", rc == 0 and len(out.strip()) > 5 and out == out2, out + err)
# --no-mmap reads the files instead of mapping them (reset_file_access): the same model, the same answer.
rc3, out3, err3 = run("generate", CHAT, "What is 2+3?", "--max-tokens", "20", "--policy", "greedy", "--no-mmap")
check("generate --no-mmap answers as the mapped model does", rc3 == 0 and out3 == out, out3 + err3)
rc, out, err = run("generate", CHAT, "-", "--max-tokens", "8", stdin="What is 2+3?\n")
check("generate reads the prompt from stdin", rc == 0 and len(out.strip()) > 0, out + err)
trace = os.path.join(TMP, "trace.jsonl")
rc, out, err = run("generate", CHAT, "Hi", "--max-tokens", "12", "--policy", "reset t_low=0.6 tau0=1.5 seed=1",
                   "--jsonl", trace)
with open(trace, encoding="utf-8") as f:
    records = [json.loads(line) for line in f]
check("generate --jsonl writes one record per token with ReSET signals",
      rc == 0 and len(records) == 12
      and all({"entropy", "step_entropy", "threshold", "temperature", "text"} <= set(r) for r in records)
      and all(r["temperature"] in (0.6000000238418579, 1.0) or abs(r["temperature"] - 0.6) < 1e-6 for r in records)
      and "".join(r["text"] for r in records).strip() == out.strip(), f"{records[:2]} {out!r} {err}")
rc, out, err = run("generate", CHAT, "Hi", "--max-tokens", "4", "--jsonl", "-")
check("generate --jsonl - puts JSON only on stdout",
      rc == 0 and all(json.loads(l)["sequence"] == 0 for l in out.splitlines()) and len(out.splitlines()) == 4, out)

# --- log-probabilities (0.3) ----------------------------------------------------------
# Every trace line has "logprob", log p(token) under softmax(raw logits): finite, <= 0, and not 0
# everywhere (the chat fixture's random weights are far from certain of anything).  Greedy takes
# the argmax, whose probability is at least exp(-H_t): H = -sum p log p >= -log p_max.
def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
greedy_20 = ["--max-tokens", "20", "--policy", "greedy"]
rc, out, err = run("generate", CHAT, "What is 2+3?", *greedy_20, "--jsonl", "-")
greedy = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
logprobs = [r.get("logprob") for r in greedy]
check("generate --jsonl: every token has a finite logprob <= 0 (exp(logprob) <= 1), some clearly below 0",
      len(greedy) == 20 and all(is_number(x) and x <= 0 and math.exp(x) <= 1 for x in logprobs)
      and min(logprobs) < -0.1, out + err)
check("generate --jsonl greedy: each logprob is the argmax's, at least -entropy",
      len(greedy) == 20 and all(r["logprob"] >= -r["entropy"] - 1e-4 for r in greedy), out)
rc, out, err = run("generate", CHAT, "Hi", "--max-tokens", "20", "--policy", "fixed 3.0 seed=2", "--jsonl", "-")
hot_steps = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
check("generate --jsonl at T 3: the drawn token's logprob (finite, <= 0), below -entropy for some token",
      len(hot_steps) == 20 and all(is_number(r.get("logprob")) and r["logprob"] <= 0 for r in hot_steps)
      and any(r["logprob"] < -r["entropy"] for r in hot_steps), out + err)
# --top-logprobs N: each line lists the N most likely tokens of the row the token was drawn from,
# most likely first, with their texts; greedy's first is the token itself, with the step's logprob.
rc, out, err = run("generate", CHAT, "What is 2+3?", *greedy_20, "--top-logprobs", "4", "--jsonl", "-")
tops = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
check("generate --top-logprobs 4: four entries per line, sorted, the greedy token first with the step's logprob",
      len(tops) == 20 and all(len(r["top_logprobs"]) == 4 for r in tops)
      and all(r["top_logprobs"][0]["token"] == r["token"] and r["top_logprobs"][0]["logprob"] == r["logprob"]
              for r in tops)
      and all(all(a["logprob"] >= b["logprob"] for a, b in zip(r["top_logprobs"], r["top_logprobs"][1:]))
              for r in tops)
      and [r["token"] for r in tops] == [r["token"] for r in greedy], out + err)
check("generate --top-logprobs: each entry has the token's text; the four probabilities sum to at most 1",
      len(tops) == 20 and all(isinstance(e.get("text"), str) for r in tops for e in r["top_logprobs"])
      and all(sum(math.exp(e["logprob"]) for e in r["top_logprobs"]) <= 1 + 1e-6 for r in tops)
      and any(e["text"] for r in tops for e in r["top_logprobs"]), out)
rc, out, err = run("generate", CHAT, "Hi", "--max-tokens", "20", "--policy", "fixed 3.0 seed=2", "--top-logprobs", "20",
                   "--jsonl", "-")
hot_tops = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
check("generate --top-logprobs 20 at T 3: the same draws as without it; the drawn token's entry, where listed, is "
      "its logprob",
      [r["token"] for r in hot_tops] == [r["token"] for r in hot_steps]
      and all(e["logprob"] == r["logprob"] for r in hot_tops for e in r["top_logprobs"] if e["token"] == r["token"])
      and any(r["token"] not in [e["token"] for e in r["top_logprobs"]] for r in hot_tops), out + err)
check_error("--top-logprobs above 20", ["generate", CHAT, "Hi", "--top-logprobs", "21", "--jsonl", "-"], 2,
            "--top-logprobs")
check_error("--top-logprobs without --jsonl", ["generate", CHAT, "Hi", "--top-logprobs", "3"], 2, "add --jsonl")
# --- stop conditions (0.5) ------------------------------------------------------------
# The 20 tokens at T 3 end by --max-tokens, now the library's max_tokens: "length".  A stop
# string cut from their text (characters 6..9, which for this seed spans tokens) ends the same
# draws at the token that completes its first occurrence, reporting the text before it; a stop id
# ends them at that id's first draw, its text included.
hot_text = "".join(r["text"] for r in hot_steps)
check("generate --max-tokens ends with \"length\" in the trace",
      len(hot_steps) == 20 and hot_steps[-1].get("end_reason") == "length"
      and all(not r["end"] for r in hot_steps[:-1]), out)
stop = hot_text[6:10]
rc, out, err = run("generate", CHAT, "Hi", "--max-tokens", "20", "--policy", "fixed 3.0 seed=2", "--stop", stop,
                   "--jsonl", "-")
stopped = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
# The string began in an earlier token, whose text was held back: the last step reports less than it.
spans = len(stopped) > 1 and len(stopped[-1]["text"]) < len(stop)
check("generate --stop: the same draws up to the token completing the string's first occurrence, the text before it",
      len(stop) == 4 and spans and [r["token"] for r in stopped] == [r["token"] for r in hot_steps[:len(stopped)]]
      and stopped[-1].get("end_reason") == "stop" and stopped[-1].get("stop_index") == 0
      and "".join(r["text"] for r in stopped) == hot_text[:hot_text.find(stop)]
      and len("".join(r["text"] for r in hot_steps[:len(stopped)])) >= hot_text.find(stop) + len(stop)
      and len("".join(r["text"] for r in hot_steps[:len(stopped) - 1])) < hot_text.find(stop) + len(stop),
      f"{stop!r} {out}{err}")
rc, out, err = run("generate", CHAT, "Hi", "--max-tokens", "20", "--policy", "fixed 3.0 seed=2", "--stop", stop)
check("generate --stop prints the answer up to the stop string",
      rc == 0 and out == hot_text[:hot_text.find(stop)] + "\n", f"{out!r} {err}")
stop_id = hot_steps[5]["token"] if len(hot_steps) == 20 else -1
first = [r["token"] for r in hot_steps].index(stop_id) if stop_id >= 0 else -1
rc, out, err = run("generate", CHAT, "Hi", "--max-tokens", "20", "--policy", "fixed 3.0 seed=2", "--stop-id",
                   str(stop_id), "--jsonl", "-")
stopped = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
check("generate --stop-id: ends at the id's first draw, its text reported",
      len(stopped) == first + 1 and stopped[-1].get("end_reason") == "stop" and stopped[-1].get("stop_index") == -1
      and "".join(r["text"] for r in stopped) == "".join(r["text"] for r in hot_steps[:first + 1]), out + err)
# --ignore-eos: at T 3 seed 2 "Hi" draws an end-of-generation id within 200 tokens; with the flag that
# id is one more token (not the end) and the answer runs to --max-tokens, the same draws up to it.
hot_200 = ["generate", CHAT, "Hi", "--max-tokens", "200", "--policy", "fixed 3.0 seed=2", "--jsonl", "-"]
rc, out, err = run(*hot_200)
eos_run = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
rc, out, err = run(*hot_200, "--ignore-eos")
ignored = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
check("generate --ignore-eos: past the end-of-generation id to --max-tokens, the same draws before it",
      eos_run and eos_run[-1].get("end_reason") == "eos" and len(eos_run) < 200 and len(ignored) == 200
      and [r["token"] for r in ignored[:len(eos_run)]] == [r["token"] for r in eos_run]
      and not ignored[len(eos_run) - 1]["end"] and ignored[-1].get("end_reason") == "length", out + err)
check_error("--stop-id outside the vocabulary", ["generate", CHAT, "Hi", "--stop-id", "512"], 1,
            "options->ids[0] = 512 is outside the vocabulary")
check_error("--stop that is too long", ["generate", CHAT, "Hi", "--stop", "x" * 257], 1, "longer than 256 bytes")

# --logit-bias ID:BIAS (0.6): -inf bans the greedy answer's first token, so the first token is
# another; +100 on one token makes every greedy token that one.
greedy_10 = ["generate", CHAT, "What is 2+3?", "--policy", "greedy", "--max-tokens", "10", "--jsonl", "-"]
rc, out, err = run(*greedy_10)
plain = [json.loads(l)["token"] for l in out.splitlines()] if rc == 0 else []
rc, out, err = run(*greedy_10, "--logit-bias", f"{plain[0] if plain else 0}:-inf")
banned = [json.loads(l)["token"] for l in out.splitlines()] if rc == 0 else []
rc, out, err = run(*greedy_10, "--logit-bias", "480:100", "--logit-bias", "7:-3.5")
forced = [json.loads(l)["token"] for l in out.splitlines()] if rc == 0 else []
check("generate --logit-bias: a ban moves the first greedy token, +100 decides every one",
      len(plain) == 10 and banned and banned[0] != plain[0] and plain[0] not in banned and forced == [480] * 10,
      f"{plain} {banned} {forced} {err}")
check_error("--logit-bias without a colon", ["generate", CHAT, "Hi", "--logit-bias", "5"], 2, "takes ID:BIAS")
check_error("--logit-bias past 100", ["generate", CHAT, "Hi", "--logit-bias", "5:150"], 2, "[-100, 100]")
check_error("--logit-bias outside the vocabulary", ["generate", CHAT, "Hi", "--logit-bias", "512:1"], 1,
            "entries[0].token = 512 is outside the vocabulary")

# --prompt-cache FILE (0.8).  The first run prefills and saves the state after its prompt; a second
# run of the same prompt reuses every token and writes the same trace (its logits and KV come from
# the file, bit for bit, on any backend).  On the CPU backend, whose prefill computes each token
# alone, a prompt sharing only the chat template's start reuses that prefix and still writes exactly
# what a run without the cache writes.  A cache from another model is reported and ignored.
cache = os.path.join(TMP, "prompt.cache")
sampled_20 = ["--policy", "fixed 1.0 seed=5", "--max-tokens", "20", "--jsonl", "-"]
rc, plain_out, err = run("generate", CHAT, "What is 2+3?", *sampled_20)
rc1, first_out, err1 = run("generate", CHAT, "What is 2+3?", *sampled_20, "--prompt-cache", cache)
rc2, second_out, err2 = run("generate", CHAT, "What is 2+3?", *sampled_20, "--prompt-cache", cache)
total = re.search(r"(\d+) of (\d+) prompt tokens reused", err1)
check("generate --prompt-cache: saved by the first run, every token reused by the second, the same trace",
      rc == rc1 == rc2 == 0 and plain_out and first_out == plain_out and second_out == plain_out
      and total and total.group(1) == "0" and f"{total.group(2)} of {total.group(2)} prompt tokens reused" in err2
      and os.path.getsize(cache) > 1000, err1 + err2)
cpu_cache = os.path.join(TMP, "cpu.cache")
rc, _, err = run("generate", CHAT, "What is 2+3?", *sampled_20, "--prompt-cache", cpu_cache, "--backend", "cpu")
rc, want_out, _ = run("generate", CHAT, "What is 7*6?", *sampled_20, "--backend", "cpu")
rc2, got_out, err2 = run("generate", CHAT, "What is 7*6?", *sampled_20, "--prompt-cache", cpu_cache,
                         "--backend", "cpu")
partial = re.search(r"(\d+) of (\d+) prompt tokens reused", err2)
check("generate --prompt-cache: a shared prefix reused, the rest prefilled, the trace unchanged (CPU)",
      rc == rc2 == 0 and want_out and got_out == want_out and partial
      and 0 < int(partial.group(1)) < int(partial.group(2)), err2)
not_cache = write("not-a-cache.json", '{"a": 1}')
rc, out, err = run("generate", CHAT, "What is 7*6?", *sampled_20, "--prompt-cache", not_cache, "--backend", "cpu")
check("generate --prompt-cache: a file that is not a sequence file is reported, ignored and left as it was",
      rc == 0 and out == want_out and "ignoring the prompt cache" in err and "left as it is" in err
      and open(not_cache).read() == '{"a": 1}', err)
fp32_cache = os.path.join(TMP, "fp32.cache")
rc, _, _ = run("generate", CHAT, "What is 2+3?", *sampled_20, "--prompt-cache", fp32_cache, "--backend", "cpu",
               "--kv-cache", "fp32")
rc2, out, err = run("generate", CHAT, "What is 7*6?", *sampled_20, "--prompt-cache", fp32_cache, "--backend", "cpu")
rc3, _, err3 = run("generate", CHAT, "What is 7*6?", *sampled_20, "--prompt-cache", fp32_cache, "--backend", "cpu")
reused = re.search(r"(\d+) of (\d+) prompt tokens reused", err3)
check("generate --prompt-cache: another session's cache (FP32 KV) is replaced by this one's",
      rc == rc2 == rc3 == 0 and out == want_out and "KV cache of fp32" in err and reused
      and reused.group(1) == reused.group(2), err + err3)
# --kv-cache for chat, generate and eval (0.8; the session option is older): an FP8 cache runs, and an
# unknown type is a usage error.
rc, out, err = run("generate", CHAT, "What is 2+3?", "--policy", "greedy", "--max-tokens", "8", "--jsonl", "-",
                   "--kv-cache", "fp8")
check("generate --kv-cache fp8 runs", rc == 0 and len(out.splitlines()) == 8, err)
check_error("--kv-cache of an unknown type", ["generate", CHAT, "Hi", "--kv-cache", "fp4"], 2,
            "unknown KV cache type 'fp4'")

# chat's /stats reports the mean over the same tokens and exp(-mean), to its printed precision.
greedy_mean = sum(logprobs) / len(logprobs) if len(greedy) == 20 else float("nan")
rc, out, err = run("chat", CHAT, *greedy_20, stdin="What is 2+3?\n/stats\n")
m = re.search(r"log-prob: mean (-?[0-9.]+) nats/token, perplexity ([0-9.]+) \(raw model distribution\)", out)
check("chat /stats: the mean log-probability of the answer and its perplexity, as the trace gives them",
      rc == 0 and m is not None and abs(float(m[1]) - greedy_mean) <= 0.0005 + 1e-6
      and abs(float(m[2]) - math.exp(-greedy_mean)) <= 0.005 + 1e-6, f"{out}{err} trace mean {greedy_mean}")

# Each turn prefills only what the session does not already hold (reset_truncate, 0.6).  With
# --no-think the generation prompt ends in an empty reasoning block that the template leaves out
# of the first answer when it renders the second turn, so the session keeps the first prompt up
# to there and prefills the rest; until session 33 such a turn prefilled the whole conversation.
rc, out, err = run("chat", CHAT, "--no-think", *greedy_20, stdin="What is 2+3?\n/stats\nAnd 4+4?\n/stats\n/context\n")
turns = [(int(p), int(k)) for p, k in re.findall(r"prefill: (\d+) tokens in .*, (\d+) more kept from the last turn", out)]
decoded = [int(n) for n in re.findall(r"decode:  (\d+) tokens", out)]
held = re.search(r"context: (\d+) of", out)
check("chat keeps what the session holds of the next turn's prompt and prefills only the rest",
      rc == 0 and len(turns) == 2 and len(decoded) == 2 and held is not None and turns[0][1] == 0
      and 0 < turns[1][1] < turns[0][0] and turns[1][0] + turns[1][1] + decoded[1] == int(held[1]), out + err)

# /retry asks the last message again: the session is cut back to its prompt (all of it kept but the
# token that gives the logits), the conversation keeps one answer, and the next seed draws another
# one; greedy gives the same one.  Nothing to retry before an answer.
rc, out, err = run("chat", CHAT, "--max-tokens", "20", "--policy", "fixed 1.0 seed=3",
                   stdin="/retry\nWhat is 2+3?\n/stats\n/retry\n/stats\n/context\n")
answers = [l for l in out.splitlines() if l and not re.match(r"(prefill|decode|entropy|temperature|log-prob|context)"
                                                              r"[: ]|\[seed|no answer|  ", l)]
turns = [(int(p), int(k)) for p, k in re.findall(r"prefill: (\d+) tokens in .*, (\d+) more kept from the last turn", out)]
check("chat /retry: the last message again from its kept prompt, with the next seed",
      rc == 0 and "no answer to retry" in out and "[seed 4]" in out and len(turns) == 2
      and turns[1] == (1, turns[0][0] - 1) and len(answers) == 2 and answers[0] != answers[1]
      and "context: " + str(turns[0][0] + 20) + " of" in out and "2 messages" in out, out + err)
rc, out, err = run("chat", CHAT, *greedy_20, stdin="What is 2+3?\n/retry\n")
answers = [l for l in out.splitlines() if l.strip()]
check("chat /retry under greedy: the same answer", rc == 0 and len(answers) == 2 and answers[0] == answers[1],
      out + err)

# chat --stop / --logit-bias (0.7): the same options as generate's.  A stop string cut from the greedy
# answer ends it where the string first appears, without the string, and the conversation goes on; +100
# on one token makes the answer generate's under the same bias (the first turn renders the same prompt).
rc, out, err = run("chat", CHAT, *greedy_20, stdin="What is 2+3?\n")
full = out.rstrip("\n") if rc == 0 else ""
stop = full[8:12]
rc, out, err = run("chat", CHAT, *greedy_20, "--stop", stop, stdin="What is 2+3?\nAnd 4+4?\n")
answers = out.split("\n")
check("chat --stop: the answer up to the string's first occurrence, then the next turn",
      len(stop) == 4 and rc == 0 and answers[0] == full[:full.find(stop)] and len(answers) >= 2
      and any(a.strip() for a in answers[1:]), f"{stop!r} {full!r} {out!r} {err}")
rc, out, err = run("chat", CHAT, *greedy_20, "--logit-bias", "480:100", stdin="What is 2+3?\n")
rc2, out2, err2 = run("generate", CHAT, "What is 2+3?", *greedy_20, "--logit-bias", "480:100")
check("chat --logit-bias: +100 decides every token, as in generate", rc == 0 and rc2 == 0 and out == out2
      and out.rstrip("\n") != full, f"{out!r} {out2!r} {err}{err2}")
check_error("chat --logit-bias without a colon", ["chat", CHAT, "--logit-bias", "5"], 2, "takes ID:BIAS")
check_error("chat --stop-id outside the vocabulary", ["chat", CHAT, "--stop-id", "512"], 1,
            "options->ids[0] = 512 is outside the vocabulary")

# --- chat through a pipe -----------------------------------------------------------
rc, out, err = run("chat", CHAT, "--max-tokens", "10", stdin="What is 2+3?\n/stats\nline one \\\nline two\n")
check("chat works from a pipe, no escape codes",
      rc == 0 and "\x1b" not in out and "decode:  10 tokens" in out and out.count("\n") >= 3, out + err)
rc, out, err = run("chat", CHAT, "--no-think", "--max-tokens", "5", stdin='"""\nfirst\nsecond\n"""\n/policy greedy\n')
check("chat reads a \"\"\" block and commands from a pipe", rc == 0 and "policy: greedy" in out, out + err)

# --seed / --top-p / --top-k without --policy change the model's own sampling (its
# generation_config.json, read back with reset_session_get_policy); until session 26 they
# were ignored without --policy (chat) or replaced it with "fixed 0.6" (generate).
rc, out, err = run("chat", "--top-p", "0.5", "--seed", "3", stdin="/policy\n")
check("chat --top-p/--seed change the embedded model's own sampling (fixed 0.6, top-p 0.95 there)",
      rc == 0 and "policy: fixed T=0.6 top_p=0.5 top_k=0 seed=3" in out, out + err)
rc, out, err = run("generate", CHAT, "What is 2+3?", "--max-tokens", "20", "--top-k", "1", "--seed", "9")
rc2, out2, _ = run("generate", CHAT, "What is 2+3?", "--max-tokens", "20", "--policy", "greedy")
check("generate --top-k 1 over the model's sampling is greedy", rc == 0 and out == out2, out + err + out2)

# --- repetition penalties (0.2) ------------------------------------------------------
# Greedy "Hi" on the chat fixture repeats " a" at every step.  A frequency penalty of 2 (flag or
# policy key, the same field) must change the output, and where it first does, the token greedy
# took must be one generated before (only those are penalized), chosen from the same raw logits
# (the entropy the trace reports is the raw logits', so it is equal there).
def trace_of(*extra):
    rc, out, err = run("generate", CHAT, "Hi", "--max-tokens", "20", "--policy", *extra, "--jsonl", "-")
    return rc, [json.loads(l) for l in out.splitlines()] if rc == 0 else [], err
rc, plain, err = trace_of("greedy")
rc2, flag, err2 = trace_of("greedy", "--frequency-penalty", "2")
rc3, key, err3 = trace_of("greedy frequency_penalty=2")
plain_ids, flag_ids = [r["token"] for r in plain], [r["token"] for r in flag]
first = next((i for i, (a, b) in enumerate(zip(plain_ids, flag_ids)) if a != b), None)
check("generate greedy on 'Hi' repeats a token (the penalty test below needs one)",
      rc == 0 and len(plain_ids) == 20 and len(set(plain_ids)) < len(plain_ids), str(plain_ids) + err)
check("generate --frequency-penalty 2 changes greedy output where a generated token would repeat",
      rc2 == 0 and len(flag_ids) == 20 and first is not None and first >= 1 and plain_ids[first] in plain_ids[:first]
      and plain[first]["entropy"] == flag[first]["entropy"], f"{plain_ids} {flag_ids} {err2}")
check("--policy 'greedy frequency_penalty=2' is the same policy as --frequency-penalty 2",
      rc3 == 0 and [r["token"] for r in key] == flag_ids, str(key) + err3)
rc, out, err = run("chat", CHAT, "--presence-penalty", "1.5", "--frequency-penalty", "-0.5", stdin="/policy\n")
check("chat --presence-penalty/--frequency-penalty change the model's sampling, and /policy shows them",
      rc == 0 and "policy: fixed T=0.6 top_p=0.95 top_k=20 seed=0 presence_penalty=1.5 frequency_penalty=-0.5"
      in out, out + err)
# Each chat answer is a new generation: the penalties count that answer's tokens only.  Both runs
# answer "Hi" alike unpenalized (" a" repeated), then one turns on a frequency penalty of 2 for
# the second answer.  That answer's first token has nothing of its own generation to count, so it
# must be the unpenalized run's; counting the first answer's tokens too would push " a" down by 32.
second = "/max 1\nHi\n"
rc, out, err = run("chat", CHAT, "--policy", "greedy", "--max-tokens", "16",
                   stdin="Hi\n/policy greedy frequency_penalty=2\n" + second)
rc2, out2, err2 = run("chat", CHAT, "--policy", "greedy", "--max-tokens", "16", stdin="Hi\n/policy greedy\n" + second)
lines, lines2 = out.splitlines(), out2.splitlines()
check("chat: two piped messages are answered, and a penalty counts only the current answer's tokens",
      rc == rc2 == 0 and len(lines) == len(lines2) == 4 and "frequency_penalty=2" in lines[1]
      and lines[0] == lines2[0] and lines[3] == lines2[3] and lines[3].strip() and lines[3].strip() in lines[0],
      out + err + out2 + err2)

# --- the multiplicative repetition penalty (0.3) -------------------------------------
# Hugging Face's / llama.cpp's penalty over the whole context (prompt, earlier answers and the
# tokens generated so far): a logit z of such a token becomes z/r if z > 0, else z*r.  Greedy "Hi"
# repeats " a" (checked above); with r = 1.5 it must part from plain greedy where greedy would
# take a token it has generated before, the raw logits (the entropy) still being the same there.
rc, rep, err = trace_of("greedy", "--repetition-penalty", "1.5")
rep_ids = [r["token"] for r in rep]
first = next((i for i, (a, b) in enumerate(zip(plain_ids, rep_ids)) if a != b), None)
check("generate --repetition-penalty 1.5 changes greedy output where a token would repeat",
      rc == 0 and len(rep_ids) == 20 and first is not None and plain_ids[first] in plain_ids[:first]
      and plain[first]["entropy"] == rep[first]["entropy"] and len(set(rep_ids)) > len(set(plain_ids)),
      f"{plain_ids} {rep_ids} {err}")
rc, key, err = trace_of("greedy repetition_penalty=1.3")
rc2, flag, err2 = trace_of("greedy", "--repetition-penalty", "1.3")
key_ids = [r["token"] for r in key]
check("--policy 'greedy repetition_penalty=1.3' is the same policy as --repetition-penalty 1.3, and not greedy's",
      rc == rc2 == 0 and len(key_ids) == 20 and key_ids == [r["token"] for r in flag] and key_ids != plain_ids,
      f"{plain_ids} {key_ids} {err}{err2}")
# Unlike the frequency penalty, it counts the prompt: greedy "Is a b?" opens with " a", a token of
# the prompt, which r = 1.5 pushes below another at the very first step; a frequency penalty of 2
# has no generated token to count there.
rc, out, err = run("tokenize", CHAT, "Is a b?")
prompt_ids = [int(x) for x in out.split()] if rc == 0 else []
def first_tokens(*extra):
    rc, out, _ = run("generate", CHAT, "Is a b?", "--max-tokens", "2", "--policy", "greedy", *extra, "--jsonl", "-")
    return [json.loads(l)["token"] for l in out.splitlines()] if rc == 0 else []
opening, opening_rep, opening_freq = first_tokens(), first_tokens("--repetition-penalty", "1.5"), \
    first_tokens("--frequency-penalty", "2")
check("--repetition-penalty counts the prompt's tokens (the first token changes), --frequency-penalty does not",
      len(opening) == len(opening_rep) == len(opening_freq) == 2 and opening[0] in prompt_ids
      and opening_rep[0] != opening[0] and opening_freq[0] == opening[0],
      f"prompt {prompt_ids}: {opening} {opening_rep} {opening_freq} {err}")
# In chat it spans the conversation: each answer's reset_state leaves the context whole.  The
# second "Hi" is answered " a" unpenalized (lines2, above) and even with r = 3 when " a" is in no
# earlier turn; after a first answer of " a" repeated, r = 3 must answer something else.
rc, out, err = run("chat", CHAT, "--policy", "greedy", "--max-tokens", "16",
                   stdin="Hi\n/policy greedy repetition_penalty=3\n" + second)
rc2, fresh, err2 = run("chat", CHAT, "--policy", "greedy", "--repetition-penalty", "3", "--max-tokens", "1",
                       stdin="Hi\n")
lines = out.splitlines()
check("chat: the repetition penalty counts the earlier answers' tokens",
      rc == rc2 == 0 and len(lines) == 4 and lines[1] == "policy: greedy repetition_penalty=3"
      and lines[0] == lines2[0] and fresh.strip() == lines2[3].strip() and lines2[3].strip() in lines[0]
      and lines[3].strip() and lines[3] != lines2[3], out + err + fresh + err2 + out2)
rc, out, err = run("chat", CHAT, "--repetition-penalty", "1.25", "--presence-penalty", "0.5",
                   stdin="/policy\n/policy greedy repetition_penalty=0.05\n/policy\n")
check("chat --repetition-penalty changes the model's sampling, /policy shows it and keeps it when refusing 0.05",
      rc == 0 and out.count("policy: fixed T=0.6 top_p=0.95 top_k=20 seed=0 presence_penalty=0.5 "
                            "repetition_penalty=1.25\n") == 2
      and "policy not changed: policy parameter repetition_penalty is 0.05" in out, out + err)
# A model whose generation_config.json sets one: the session's initial policy takes it, `info`
# shows it, and --repetition-penalty 1 turns it off.
PENALIZED = os.path.join(TMP, "penalized-model")
shutil.copytree(CHAT, PENALIZED)
with open(os.path.join(PENALIZED, "generation_config.json"), encoding="utf-8") as f:
    generation = json.load(f)
generation["repetition_penalty"] = 1.1
with open(os.path.join(PENALIZED, "generation_config.json"), "w", encoding="utf-8") as f:
    json.dump(generation, f)
rc, out, err = run("info", PENALIZED)
check("info shows a generation_config.json repetition_penalty in the sampling a session starts with",
      rc == 0 and "sampling      fixed T=0.6 top_p=0.95 top_k=20 seed=0 repetition_penalty=1.1\n" in out, out + err)
rc, out, err = run("chat", PENALIZED, stdin="/policy\n")
rc2, out2, err2 = run("chat", PENALIZED, "--repetition-penalty", "1", stdin="/policy\n")
check("chat starts with the model's repetition penalty; --repetition-penalty 1 turns it off",
      rc == rc2 == 0 and "policy: fixed T=0.6 top_p=0.95 top_k=20 seed=0 repetition_penalty=1.1\n" in out
      and "policy: fixed T=0.6 top_p=0.95 top_k=20 seed=0\n" in out2, out + err + out2 + err2)

# A preset named on the command line reaches the library intact (until session 27 its short
# name was read from a destroyed temporary, so every preset was refused as "").
rc, out, err = run("generate", CHAT, "hi", "--max-tokens", "2", "--policy", "reset preset=Qwen3-8B", "--jsonl", "-")
steps = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
check("generate --policy 'reset preset=Qwen3-8B' runs the preset's rule (tau0 0.5505, T 0.1 or 1)",
      len(steps) == 2 and abs(steps[0]["threshold"] - 0.5505) < 1e-6  # tau0 as a float32
      and all(abs(x["temperature"] - 0.1) < 1e-6 or x["temperature"] == 1.0 for x in steps), out + err)

# --- the embedded default model ---------------------------------------------------
# With no model argument `reset chat` loads models/default (the project's own
# arithmetic model), reads the question from the pipe and answers it.
with open(os.path.join(SOURCE, "training", "data", "test.jsonl"), encoding="utf-8") as f:
    held_out = json.loads(f.readline())  # a held-out problem the model solves (card: 99.7% greedy)
rc, out, err = run("chat", "--policy", "greedy", stdin=held_out["problem"] + "\n")
check("chat with no model argument answers with the embedded model",
      rc == 0 and f"\\boxed{{{held_out['answer']}}}" in out, out + err)

# A conversation that outgrows --context: the oldest exchanges are left out of what the
# model sees (the answer keeps a quarter of the context, or --max-tokens of it), and /save
# still writes them.  120 tokens hold about two exchanges of 20-token answers here.
saved = os.path.join(TMP, "long-chat.txt")
rc, out, err = run("chat", CHAT, "--context", "120", "--max-tokens", "20",
                   stdin="What is 2+3?\nAnd 4+4?\nAnd 5+5?\nAnd 6+6?\n/context\n/save " + saved + "\n")
with open(saved, encoding="utf-8") as f:
    transcript = f.read()
context_line = [l for l in out.splitlines() if l.startswith("context: ")]
check("chat leaves out the oldest messages when the context is full, and says so",
      rc == 0 and "earlier messages left out to fit the context of 120 tokens" in out and "is full" not in out
      and len(context_line) == 1 and "of 120 tokens held; 8 messages" in context_line[0]
      and "no longer seen by the model" in context_line[0], out + err)
check("/save writes the messages the model no longer sees", transcript.count("### user") == 4
      and "What is 2+3?" in transcript, transcript)
rc, out, err = run("chat", CHAT, "--context", "16", stdin="What is 2+3? " * 10 + "\n")
check("a message that cannot fit even alone is refused, not a crash",
      rc == 0 and "does not fit the context even without the earlier ones" in out, out + err)

# --- chat sessions: /session save | load and --session (the conversation and the model's state) ---
# A conversation continued from its directory must be the one that never stopped: the same answer to
# the next message, and the same prefill, the loaded state holding all the rest.  Under a sampled
# policy too.  Lines of the two runs that say "saved"/"loaded" are the only difference.
def session_dir(name):
    path = os.path.join(TMP, name)
    shutil.rmtree(path, ignore_errors=True)
    return path
def without_session_lines(text):  # and without the timings, which differ from run to run
    text = re.sub(r" in [0-9.]+ s \([0-9.]+ tokens/s\)", "", text)
    return "".join(l for l in text.splitlines(True) if not l.startswith(("saved ", "loaded ")))
three = "What is 2+3?\nAnd 4+4?\n/stats\nAnd 5+5?\n/stats\n"
first_two, last = "What is 2+3?\nAnd 4+4?\n/stats\n", "And 5+5?\n/stats\n"
for policy, how in (("greedy", "--session"), ("fixed 1.0 seed=3", "/session save and load")):
    flags = [CHAT, "--max-tokens", "20", "--policy", policy]
    rc, whole, err = run("chat", *flags, stdin=three)
    directory = session_dir("chat-" + policy.split()[0])
    if how == "--session":
        rc2, before, err2 = run("chat", *flags, "--session", directory, stdin=first_two)
        rc3, after, err3 = run("chat", *flags, "--session", directory, stdin=last)
    else:
        rc2, before, err2 = run("chat", *flags, stdin=first_two + f"/session save {directory}\n")
        rc3, after, err3 = run("chat", *flags, stdin=f"/session load {directory}\n" + last)
    prefills = re.findall(r"prefill: (\d+) tokens in .*, (\d+) more kept", after)
    check(f"chat continued from a saved session ({policy}, {how}) is the conversation that never stopped",
          rc == rc2 == rc3 == 0 and without_session_lines(before) + without_session_lines(after)
          == without_session_lines(whole)
          and re.search(r"^loaded 4 messages \(thinking on\) and the model's state \(\d+ tokens\) from ", after, re.M)
          and len(prefills) == 1 and int(prefills[0][1]) > int(prefills[0][0]),
          whole + "\n---\n" + before + after + err2 + err3)
    if how == "--session":
        check("--session saves the conversation on leaving", "saved 6 messages and the model's state" in after
              and json.load(open(os.path.join(directory, "conversation.json"), encoding="utf-8"))["messages"][4]
              == {"role": "user", "content": "And 5+5?"}, after)

# A state saved with another version of the conversation (here its first question edited by hand)
# still loads; the load says how much of the conversation's last prompt it holds, and the next
# message keeps exactly that much and prefills the rest.
edited = session_dir("chat-edited")
shutil.copytree(os.path.join(TMP, "chat-greedy"), edited)
with open(os.path.join(edited, "conversation.json"), encoding="utf-8") as f:
    conversation = json.load(f)
assert conversation["messages"][0] == {"role": "user", "content": "What is 2+3?"}, conversation
conversation["messages"][0]["content"] = "What is 7+3?"
with open(os.path.join(edited, "conversation.json"), "w", encoding="utf-8") as f:
    json.dump(conversation, f)
flags = [CHAT, "--max-tokens", "20", "--policy", "greedy"]
rc, out, err = run("chat", *flags, stdin=f"/session load {edited}\nAnd 6+6?\n/stats\n")
agreement = re.search(r"which holds only the first (\d+) of the (\d+) tokens of the conversation's last prompt: "
                      r"the next message prefills the rest from ", out)
kept = re.findall(r"prefill: \d+ tokens in .*, (\d+) more kept", out)
check("a state that holds another version of its conversation says how much it holds, and that much is kept",
      rc == 0 and agreement and 0 < int(agreement[1]) < int(agreement[2]) and kept == [agreement[1]], out + err)
rc, out, err = run("chat", *flags, stdin=f"/session load {os.path.join(TMP, 'chat-greedy')}\n")
check("a state that holds its conversation loads without that note",
      rc == 0 and "loaded 6 messages (thinking on) and the model's state (" in out and "holds only" not in out,
      out + err)

# What the model no longer sees stays left out: continued, a conversation that outgrew --context
# (above) is where the one that never stopped is.
directory = session_dir("chat-long")
flags = [CHAT, "--context", "120", "--max-tokens", "20"]
rc, whole, _ = run("chat", *flags, stdin="What is 2+3?\nAnd 4+4?\nAnd 5+5?\nAnd 6+6?\n/context\n")
rc2, _, _ = run("chat", *flags, "--session", directory, stdin="What is 2+3?\nAnd 4+4?\nAnd 5+5?\n")
rc3, after, err = run("chat", *flags, "--session", directory, stdin="And 6+6?\n/context\n")
context_lines = [re.findall(r"^context: .*", text, re.M) for text in (whole, after)]
check("a continued conversation leaves out what the one that never stopped leaves out",
      rc == rc2 == rc3 == 0 and len(context_lines[0]) == 1 and context_lines[0] == context_lines[1]
      and "no longer seen by the model" in context_lines[1][0], whole + after + err)
# kept_from as the file gives it, not recomputed: here everything would fit, yet the first exchange
# stays left out, before the next message and after it.
directory = session_dir("chat-kept")
os.makedirs(directory)
with open(os.path.join(directory, "conversation.json"), "w", encoding="utf-8") as f:
    json.dump({"format": "libreset-chat", "version": 1, "thinking": True, "kept_from": 2, "messages": [
        {"role": "user", "content": "What is 2+3?"}, {"role": "assistant", "content": "5"},
        {"role": "user", "content": "And 4+4?"}, {"role": "assistant", "content": "8"}]}, f)
rc, out, err = run("chat", CHAT, "--max-tokens", "5", stdin=f"/session load {directory}\n/context\nAnd 5+5?\n/context\n")
check("a loaded conversation keeps its kept_from",
      rc == 0 and out.count("messages in the conversation, the oldest 2 no longer seen by the model") == 2
      and "4 messages in" in out and "6 messages in" in out, out + err)

# The state is a cache: without it, or from another weights format, the conversation still continues,
# prefilled whole (nothing kept), with the same greedy answer as from the state.
directory = os.path.join(TMP, "chat-greedy")
flags = [CHAT, "--max-tokens", "20", "--policy", "greedy"]
rc, from_state, _ = run("chat", *flags, stdin=f"/session load {directory}\nAnd 6+6?\n")
rc2, other_weights, err2 = run("chat", *flags, "--weights", "nvfp4", stdin=f"/session load {directory}\nAnd 6+6?\n/stats\n")
os.remove(os.path.join(directory, "sequence.safetensors"))
rc3, no_state, err3 = run("chat", *flags, stdin=f"/session load {directory}\nAnd 6+6?\n/stats\n")
check("a session without its state continues, prefilled whole, with the same answer",
      rc == rc3 == 0 and "loaded 6 messages (thinking on) and no model state" in no_state
      and without_session_lines(no_state).split("\nprefill")[0] == without_session_lines(from_state).rstrip("\n")
      and re.search(r"prefill: \d+ tokens in .*, 0 more kept", no_state), from_state + no_state + err3)
check("a state from another weights format is refused, and the conversation continues",
      rc2 == 0 and "and not the model's state (" in other_weights and "weights" in other_weights
      and re.search(r"prefill: \d+ tokens in .*, 0 more kept", other_weights), other_weights + err2)

# Every message comes back byte for byte, whatever it holds (the Markdown of /save cannot tell a
# message's own "### user" line from the next message): loaded and saved again, the file is the same.
directory, again = session_dir("chat-text"), session_dir("chat-text-again")
tricky = '"""\n### user\n\nnot a new message \\ "quoted" \u00e9 \u2211 \U0001F642\n\ttab\n"""\n'
rc, out, err = run("chat", CHAT, "--max-tokens", "5", "--system", "Be brief.\n### assistant",
                   stdin=tricky + f"/session save {directory}\n")
rc2, out2, err2 = run("chat", CHAT, stdin=f"/session load {directory}\n/session save {again}\n")
saved = json.load(open(os.path.join(directory, "conversation.json"), encoding="utf-8")) if rc == 0 else {}
check("a saved conversation keeps each message exactly, and loads back to the same file",
      rc == rc2 == 0 and saved.get("messages", [{}])[:2] == [
          {"role": "system", "content": "Be brief.\n### assistant"},
          {"role": "user", "content": '### user\n\nnot a new message \\ "quoted" \u00e9 \u2211 \U0001F642\n\ttab'}]
      and saved.get("kept_from") == 1 and os.path.exists(os.path.join(again, "conversation.json"))
      and open(os.path.join(directory, "conversation.json"), "rb").read()
      == open(os.path.join(again, "conversation.json"), "rb").read(), out + err + out2 + err2)

rc, out, err = run("chat", CHAT, stdin="/session\n/session save\n/session keep x\n")
check("/session without --session: says so; save needs a directory; an unknown verb is refused",
      rc == 0 and "no session directory" in out and "no --session directory to default to" in out
      and "/session save [DIR] | /session load [DIR]" in out, out + err)
p = subprocess.run([BINARY, "chat", CHAT, "--max-tokens", "3", "--policy", "greedy"],
                   input=b"bad \xff byte\nWhat is 2+3?\n", capture_output=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
check("a message that is not UTF-8 is refused, and the REPL goes on",
      p.returncode == 0 and b"[message not sent: " in p.stdout and b"not valid UTF-8" in p.stdout
      and len(p.stdout.split(b"]\n", 1)[-1].strip()) > 0, repr(p.stdout) + repr(p.stderr))

# A broken conversation.json: /session load says what is wrong and the REPL goes on; --session,
# which names it at start, fails with that one line.
good = {"format": "libreset-chat", "version": 1, "thinking": True, "kept_from": 0,
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
broken = [
    ("not JSON", b"{\"format\": ", "bad JSON"),
    ("another format", json.dumps(dict(good, format="other")).encode(), "no \"format\": \"libreset-chat\""),
    ("a newer version", json.dumps(dict(good, version=2)).encode(), "saved by a newer reset"),
    ("no messages", json.dumps({k: v for k, v in good.items() if k != "messages"}).encode(), "\"messages\" is not"),
    ("an unknown role", json.dumps(dict(good, messages=[{"role": "tool", "content": "x"}])).encode(), "the role 'tool'"),
    ("two user messages in a row", json.dumps(dict(good, messages=[good["messages"][0]] * 2)).encode(),
     "where 'assistant' belongs"),
    ("a system prompt later", json.dumps(dict(good, messages=good["messages"] + [{"role": "system", "content": "s"}]))
     .encode(), "a system prompt after the first message"),
    ("kept_from on an answer", json.dumps(dict(good, kept_from=1)).encode(), "is not the start of an exchange"),
    ("kept_from negative", json.dumps(dict(good, kept_from=-1)).encode(), "\"kept_from\" is not a count"),
    ("content not UTF-8", json.dumps(good).encode().replace(b"hello", b"hel\xfflo"), "bad JSON"),
]
for name, content, needle in broken:
    directory = session_dir("chat-broken")
    os.makedirs(directory)
    with open(os.path.join(directory, "conversation.json"), "wb") as f:
        f.write(content)
    rc, out, err = run("chat", CHAT, "--max-tokens", "3", stdin=f"/session load {directory}\nWhat is 2+3?\n/context\n")
    check(f"/session load of a conversation with {name}: the reason, and the REPL goes on",
          rc == 0 and needle in out and "2 messages in the conversation" in out, out + err)
    check_error(f"--session with a conversation with {name}", ["chat", CHAT, "--session", directory], 1, needle)
check_error("--session with an empty directory name", ["chat", CHAT, "--session", ""], 2, "--session needs a directory")
check_error("--session with a directory that is a file", ["chat", CHAT, "--session", os.path.join(CHAT, "config.json")],
            1, "cannot create")

# --think-budget appends "</think>" after N reasoning tokens.  Greedy decoding is deterministic,
# so the closed reasoning must be the first part of the unlimited one, and shorter.
def reasoning(text):
    return text.split("<think>", 1)[1].split("</think>", 1)[0]
rc, out, err = run("chat", "--policy", "greedy", stdin=held_out["problem"] + "\n")
rc2, out2, err2 = run("chat", "--policy", "greedy", "--think-budget", "12", stdin=held_out["problem"] + "\n")
full, closed = reasoning(out), reasoning(out2)
check("chat --think-budget closes the reasoning early with </think>",
      rc == rc2 == 0 and 0 < len(closed.strip()) < len(full) / 3 and full.startswith(closed.rstrip("\n")),
      out + err + out2 + err2)
EMBEDDED = os.path.join(SOURCE, "models", "default")
rc, out, err = run("generate", EMBEDDED, held_out["problem"], "--policy", "greedy")
rc2, out2, err2 = run("generate", EMBEDDED, held_out["problem"], "--policy", "greedy", "--think-budget", "12")
check("generate --think-budget closes the reasoning where chat's does",
      rc == rc2 == 0 and reasoning(out) == full and reasoning(out2) == closed, out + err + out2 + err2)
# eval --think-budget closes each sample's reasoning alone (reset_prefill_sequence).  Greedy: every
# one of 3 samples must be generate's closed text.  At T 3 the samples part ways (seed 3 on the CPU:
# one never opens <think>, the others close at their own steps); each must match the same seed's
# run without a budget up to where its reasoning was closed, and entirely if it never was.
generated = out2  # generate --think-budget's output, above
held_out_file = write("held-out.jsonl", json.dumps(held_out) + "\n")
budget_samples, free_samples = os.path.join(TMP, "budget.jsonl"), os.path.join(TMP, "free.jsonl")
rc, out, err = run("eval", EMBEDDED, held_out_file, "--policy", "greedy", "--samples", "3", "--think-budget", "12",
                   "--out", budget_samples)
with open(budget_samples, encoding="utf-8") as f:
    rows = [json.loads(line) for line in f]
check("eval --think-budget closes every greedy sample's reasoning as generate does",
      rc == 0 and len(rows) == 3 and all(r["reasoning_closed"] and r["text"] + "\n" == generated for r in rows),
      str(rows) + err)
hot = ["--policy", "fixed 3.0", "--samples", "4", "--seed", "3", "--max-tokens", "60"]
rc, out, err = run("eval", EMBEDDED, held_out_file, *hot, "--think-budget", "12", "--out", budget_samples)
rc2, out2, err2 = run("eval", EMBEDDED, held_out_file, *hot, "--out", free_samples)
with open(budget_samples, encoding="utf-8") as f, open(free_samples, encoding="utf-8") as g:
    pairs = [(json.loads(a), json.loads(b)) for a, b in zip(f, g)]
check("eval --think-budget: closing one sample's reasoning leaves the other samples as they were",
      rc == rc2 == 0 and len(pairs) == 4 and any(a["reasoning_closed"] for a, _ in pairs)
      and all(b["text"].startswith(a["text"].split("</think>")[0].rstrip("\n")) if a["reasoning_closed"]
              else a["text"] == b["text"] for a, b in pairs), str(pairs) + err + err2)
rc, out, err = run("chat", CHAT, stdin="/budget 5\n/budget 0\n/budget -1\n")
check("/budget sets and clears the reasoning budget, refusing a negative one",
      rc == 0 and "reasoning closed after 5 tokens" in out and "no reasoning budget" in out
      and "/budget must be an integer" in out, out + err)

# --- errors ------------------------------------------------------------------------
check_error("missing model directory", ["chat", os.path.join(TMP, "nope")], 1, "does not exist")
check_error("missing model directory (generate)", ["generate", os.path.join(TMP, "nope"), "hi"], 1, "does not exist")
check_error("a wrong RESET_MODEL", ["chat"], 1, "is not a model directory",
            env={"RESET_MODEL": os.path.join(TMP, "nope")})
check_error("unknown policy", ["generate", CHAT, "hi", "--policy", "hot"], 2, "unknown policy 'hot'")
check_error("ReSET without tau0 on an unrecognised model", ["generate", CHAT, "hi", "--policy", "reset"], 1,
            "cannot use policy 'reset'")
check_error("bad policy parameter", ["chat", CHAT, "--policy", "fixed 0.7 top_p=2"], 2, "top_p")
check_error("--top-p out of range without --policy (was ignored)", ["chat", CHAT, "--top-p", "2"], 2,
            "--top-p must be a number in [0, 1]")
check_error("a policy key presence_penalty outside [-2, 2]",
            ["generate", CHAT, "hi", "--policy", "greedy presence_penalty=3"], 2,
            "presence_penalty must be a number in [-2, 2], not '3'")
check_error("--frequency-penalty outside [-2, 2]", ["chat", CHAT, "--frequency-penalty", "-2.5"], 2,
            "--frequency-penalty must be a number in [-2, 2], not '-2.5'")
check_error("--presence-penalty outside [-2, 2] (eval)", ["eval", CHAT, "none.jsonl", "--presence-penalty", "9"], 2,
            "--presence-penalty must be a number in [-2, 2], not '9'")
check_error("--repetition-penalty below 0.1, refused by the library before the model loads",
            ["generate", CHAT, "hi", "--repetition-penalty", "0.05"], 2,
            "bad sampling options: policy parameter repetition_penalty is 0.05 (must be in [0.1, 10]")
check_error("a policy key repetition_penalty above 10", ["chat", CHAT, "--policy", "greedy repetition_penalty=11"], 2,
            "policy parameter repetition_penalty is 11 (must be in [0.1, 10]")
check_error("--repetition-penalty that is not a number", ["chat", CHAT, "--repetition-penalty", "1.1x"], 2,
            "--repetition-penalty must be a number, not '1.1x'")
check_error("a policy key repetition_penalty that is not a number",
            ["generate", CHAT, "hi", "--policy", "greedy repetition_penalty=nan"], 2,
            "repetition_penalty must be a number, not 'nan'")
one_problem = write("one-problem.jsonl", '{"problem": "What is 2+3?", "answer": "5"}\n')
check_error("--repetition-penalty above 10 (eval: when the model has loaded)",
            ["eval", CHAT, one_problem, "--repetition-penalty", "11"], 1,
            "cannot use policy 'fixed 0.6': policy parameter repetition_penalty is 11")
check_error("--think-budget below 0", ["chat", CHAT, "--think-budget", "-1"], 2, "--think-budget must be an integer")
check_error("--top-p 0, refused by the library's own check before the model loads (was: after)",
            ["chat", CHAT, "--top-p", "0"], 2, "top_p is 0")
check_error("an unknown preset, before the model loads", ["generate", CHAT, "hi", "--policy", "reset preset=Nope"], 2,
            'preset is "Nope", which is not in the paper\'s table')
check_error("--top-k below 0 (generate)", ["generate", CHAT, "hi", "--top-k", "-3"], 2, "--top-k must be an integer")
check_error("model without tokenizer", ["generate", NO_TOKENIZER, "hi", "--backend", "cpu"], 1, "no tokenizer")
check_error("unknown option", ["info", CHAT, "--frobnicate"], 2, "unknown option --frobnicate")
# The message names every command of the usage text (score was missing until session 38).
check_error("unknown command", ["dance"], 2,
            "unknown command 'dance' (chat, generate, serve, tokenize, info, bench, eval, calibrate, score)")
check_error("bad weight format", ["info", CHAT, "--weights", "fp8"], 2, "unknown weight format 'fp8'")
check_error("bad lm_head format", ["info", CHAT, "--lm-head", "fp8"], 2, "unknown lm_head format 'fp8'")
check_error("--no-mmap takes no value", ["info", CHAT, "--no-mmap=1"], 2, "option --no-mmap takes no value")
check_error("--no-mmap is a model-loading option", ["tokenize", CHAT, "hi", "--no-mmap"], 2,
            "unknown option --no-mmap")
check_error("an NVFP4 lm_head with BF16 weights", ["info", CHAT, "--lm-head", "nvfp4"], 1,
            "quantize_lm_head asks for an NVFP4 lm_head")
bad = write("bad.jsonl", '{"problem": "1+1?", "answer": "2"}\n{"problem": oops}\n')
check_error("bad JSONL line", ["eval", CHAT, bad], 1, "bad.jsonl:2: bad JSON")
# Before session 25 the hand-written JSON reader recursed into this line until the stack overflowed (SIGSEGV).
deep = write("deep.jsonl", '{"problem": ' + "[" * 200000 + "]" * 200000 + ', "answer": "2"}\n')
check_error("deeply nested JSONL line", ["eval", CHAT, deep], 1, "deep.jsonl:1: bad JSON: nested deeper than 64")
broken = write("surrogate.jsonl", '{"problem": "\\ud800\\u0041", "answer": "2"}\n')
check_error("JSONL line with a broken surrogate escape", ["eval", CHAT, broken], 1, "surrogate.jsonl:1: bad JSON")
missing = write("missing.jsonl", '{"problem": "1+1?"}\n')
check_error("JSONL line without an answer", ["eval", CHAT, missing], 1, "missing.jsonl:1: needs an \"answer\"")
check_error("missing data file", ["calibrate", CHAT, os.path.join(TMP, "none.jsonl")], 1, "cannot read")
check_error("bench gemv without a CUDA build", ["bench", "gemv"], 1, "GEMV benchmark",
            env={"RESET_GEMV_BENCH": os.path.join(TMP, "none")})

# --- eval, score, calibrate, bench ----------------------------------------------------
data = write("math.jsonl", '{"problem": "What is 2+3?", "answer": "5"}\n\n'
                           '{"question": "Tom has 3 apples and buys 4. How many?", "answer": "3+4=7\\n#### 7"}\n')
samples = os.path.join(TMP, "samples.jsonl")
rc, out, err = run("eval", CHAT, data, "--policy", "fixed 0.6", "--policy", "reset t_low=0.6 tau0=1.5",
                   "--samples", "3", "--max-tokens", "16", "--out", samples)
with open(samples, encoding="utf-8") as f:
    rows = [json.loads(line) for line in f]
check("eval prints a table row per policy",
      rc == 0 and "fixed 0.6" in out and "reset t_low=0.6 tau0=1.5" in out and "95% interval" in out, out + err)
check("eval writes problems x policies x samples records",
      len(rows) == 12 and {r["expected"] for r in rows} == {"5", "7"} and all(r["tokens"] == 16 for r in rows)
      and len({(r["problem"], r["policy"], r["sample"]) for r in rows}) == 12, str(rows[:1]))
check("eval records carry each sample's mean_logprob (finite, <= 0, not 0)",
      len(rows) == 12 and all(is_number(r.get("mean_logprob")) and r["mean_logprob"] <= 0 for r in rows)
      and max(r["mean_logprob"] for r in rows) < -0.1, str(rows[:1]))
one = write("one.jsonl", '{"problem": "What is 2+3?", "answer": "5"}\n')
rc, out, err = run("eval", CHAT, one, "--policy", "greedy", "--max-tokens", "20", "--out", samples)
with open(samples, encoding="utf-8") as f:
    rows = [json.loads(line) for line in f]
check("eval's greedy mean_logprob is the mean of generate's trace on the same prompt",
      rc == 0 and len(rows) == 1 and rows[0]["tokens"] == 20 and abs(rows[0]["mean_logprob"] - greedy_mean) < 1e-5,
      f"{rows} {err} trace mean {greedy_mean}")
greedy_text = rows[0]["text"] if rows else None
rc, out, err = run("eval", CHAT, one, "--policy", "greedy", "--repetition-penalty", "1.5", "--max-tokens", "20",
                   "--out", samples)
with open(samples, encoding="utf-8") as f:
    rows = [json.loads(line) for line in f]
rc2, out2, err2 = run("generate", CHAT, "What is 2+3?", *greedy_20, "--repetition-penalty", "1.5")
check("eval --repetition-penalty 1.5 answers as generate's does, not as plain greedy",
      rc == rc2 == 0 and len(rows) == 1 and rows[0]["text"] + "\n" == out2 and rows[0]["text"] != greedy_text,
      f"{rows} {out2!r} {greedy_text!r} {err}{err2}")
rc, out, err = run("eval", CHAT, data, "--policy", "fixed 0.6", "--samples", "2", "--max-tokens", "4",
                   "--seed", "5", "--out", samples)
with open(samples, encoding="utf-8") as f:
    seeds = {(r["problem"], r["sample"]): r["seed"] for r in (json.loads(line) for line in f)}
check("eval seeds problem i's samples with S + i*N (no problem shares random numbers, --seed counted once)",
      rc == 0 and sorted(set(seeds.values())) == [5, 7] and seeds[(0, 0)] == 5 and seeds[(1, 1)] == 7,
      str(seeds) + err)

for text, expected, verdict in [
    (r"so \boxed{5}.", "5", "correct"),
    (r"\boxed{3} then \boxed{\text{7}}", "7", "correct"),
    (r"\boxed{$\frac{1}{2}$}", "0.5", "correct"),
    (r"\boxed{50\%}", "50%", "correct"),
    (r"\boxed{+7.}", "7", "correct"),
    (r"\boxed{0.3333333}", "1/3", "correct"),  # within 1e-6
    (r"\boxed{0.33}", "1/3", "wrong"),
    (r"\boxed{\frac{a}{b}}", r"\frac{a}{b}", "correct"),
    (r"\boxed{1} and \boxed{2", "1", "correct"),
    ("no box 5", "5", "wrong"),
]:
    rc, out, err = run("score", text, expected)
    check(f"score {text!r} vs {expected!r} is {verdict}", rc == 0 and out.strip().endswith(verdict), out + err)

rc, out, err = run("calibrate", CHAT, data, "--max-tokens", "40")
check("calibrate prints tau0 from 80 entropies",
      rc == 0 and out.startswith("tau0 ") and "p80 of 80 token entropies" in out, out + err)
check("calibrate prints the percentile table, p80 equal to tau0",
      "percentile table" in out and f"p80  {out.split()[1]}" in out and "p100 " in out, out)
rc, out, err = run("bench", "decode", CHAT, "--tokens", "16", "--prompt-tokens", "8", "--repeat", "1")
check("bench decode prints tokens/s", rc == 0 and "prefill 8 tokens:" in out and "decode  16 steps:" in out
      and "tokens/s" in out, out + err)
rc, out, err = run("bench", "decode", CHAT, "--tokens", "4", "--prompt-tokens", "4", "--repeat", "1",
                   "--sequences", "3", "--policy", "fixed 0.7", "--json", "--backend", "cpu")
record = json.loads(out) if rc == 0 and out.strip().startswith("{") else {}
check("bench decode --json records the settings and the speed",
      record.get("sequences") == 3 and record.get("policy") == "fixed 0.7" and record.get("tokens_per_s", 0) > 0
      and record.get("backend") == "cpu" and record.get("presence_penalty") == 0
      and record.get("frequency_penalty") == 0 and record.get("repetition_penalty") == 1, out + err)
rc, out, err = run("bench", "decode", CHAT, "--tokens", "4", "--prompt-tokens", "4", "--repeat", "1",
                   "--policy", "greedy repetition_penalty=1.2", "--json", "--backend", "cpu")
record = json.loads(out) if rc == 0 and out.strip().startswith("{") else {}
check("bench decode --json records the policy's repetition_penalty",
      record.get("policy") == "greedy repetition_penalty=1.2" and record.get("repetition_penalty") == 1.2
      and record.get("tokens_per_s", 0) > 0, out + err)
check_error("bench decode with a bad --kv-cache", ["bench", "decode", CHAT, "--kv-cache", "fp4"], 2, "--kv-cache")
rc, out, err = run("bench", "decode", CHAT, "--tokens", "4", "--prompt-tokens", "4", "--repeat", "1",
                   "--top-logprobs", "0,5", "--json", "--backend", "cpu")
records = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
check("bench decode --top-logprobs 0,5: one record each, with the setting",
      [r.get("top_logprobs") for r in records] == [0, 5] and all(r.get("tokens_per_s", 0) > 0 for r in records),
      out + err)
check_error("bench decode --top-logprobs 21", ["bench", "decode", CHAT, "--top-logprobs", "21"], 2, "top-logprobs")

print(f"{len(failures)} failure(s)" if failures else "all passed")
sys.exit(1 if failures else 0)
