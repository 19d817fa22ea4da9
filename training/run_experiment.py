#!/usr/bin/env python3
"""The ReSET accuracy experiment (issue 8) on the embedded model, with `reset eval`.

One command runs everything; it needs only python3 (standard library) and the
`reset` binary, so it runs on the GPU machine as it is:

    python3 training/run_experiment.py --reset build/samples/reset --backend cuda --out /tmp/reset-exp

Quick smoke run (CPU build, a few problems, short generations):

    python3 training/run_experiment.py --reset build/samples/reset --backend cpu --out /tmp/smoke \\
        --problems 12 --samples 2 --val-problems 12 --val-samples 2 --calib-problems 4 \\
        --trace-prompts 4 --max-tokens 96

then `python3 training/report.py /tmp/reset-exp` writes training/results/experiment.md and the plots.

Steps (each writes its files under OUT and appends its exact command lines to
OUT/commands.log; a step whose outputs are complete is skipped on a rerun,
so an interrupted run resumes where it stopped; --force redoes them):

 1. calibrate  `reset calibrate` on the calibration split with W4A4 weights (logged as the
               reference), and the same decoding through `reset generate --jsonl` (fresh
               one-sequence session, fixed 0.6, top-p 0.95, seed S+i for prompt i: what
               reset_calibrate does) to read tau0 = p80 of the raw-logit token entropies at
               full precision: `reset calibrate` prints tau0 with 4 decimals, and this
               model's entropies are far below 1e-4 nats, so its printed tau0 is 0.0000.
               The token count of both must agree (checked).  Entropy-only thresholding
               uses the same tau0 (reset-algorithm.md: tau = tau0 always).
 2. validate   ReSET W4A4 on the validation split for each T_low (default all 500
               problems x 8 samples: the differences to detect are fractions of a point
               near 99% accuracy, and the split is small).  The choice: highest mean
               accuracy; exact ties go to the HIGHER T_low (the smaller departure from
               the T=0.6 baseline sampling).  With --tune-entropy, entropy-only
               thresholding gets its own T_low by the same rule; otherwise it uses
               ReSET's (the paper's ablation: the step gate off, all else equal).
 3. test       every configuration on the test split (default 2,000 problems x 8 samples;
               greedy ones 1 sample: greedy is deterministic), each its own `reset eval`
               process (its own wall time), per-sample JSONL kept.  --shard-size K runs
               each configuration as several evals of K problems (to fit time limits);
               results are identical (each shard passes --seed S + offset*N, so problem i
               keeps the seeds S + i*N + k of an unsharded run).
 4. traces     per-token signals (`reset generate --jsonl`) on the first --trace-prompts
               test prompts for BF16 and W4A4 at T=0.6, top-p 0.95 (seed S+i), and ReSET
               W4A4 traces of the first --reset-traces prompts for the temperature plot.
 5. bench      `reset bench decode` (batch 1, greedy) for each weight format.

No step reads the test split's results to choose anything.
"""
import argparse
import datetime
import hashlib
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
FORMATS = ["bf16", "w4a16", "w4a4"]


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def percentile(values, q):
    """numpy's default (linear interpolation between order statistics)."""
    v = sorted(values)
    if not v:
        return float("nan")
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Runner:
    def __init__(self, args):
        self.args = args
        self.out = os.path.abspath(args.out)
        os.makedirs(os.path.join(self.out, "logs"), exist_ok=True)
        self.log_path = os.path.join(self.out, "commands.log")
        self.manifest_path = os.path.join(self.out, "manifest.json")
        self.manifest = {}
        self.log_lock = threading.Lock()
        if os.path.exists(self.manifest_path):
            with open(self.manifest_path, encoding="utf-8") as f:
                self.manifest = json.load(f)

    def save(self):
        if self.args.dry_run:
            return
        tmp = self.manifest_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.manifest, f, indent=1, sort_keys=True)
        os.replace(tmp, self.manifest_path)

    def base(self, weights):
        a = self.args
        cmd = ["--weights", weights, "--backend", a.backend]
        if a.threads:
            cmd += ["--threads", str(a.threads)]
        return cmd

    def run(self, name, cmd, stdout_path=None):
        """Runs cmd, stdout to stdout_path (or logs/NAME.out), stderr to logs/NAME.err; logs it."""
        out_path = stdout_path or os.path.join(self.out, "logs", name + ".out")
        err_path = os.path.join(self.out, "logs", name + ".err")
        line = shlex.join(cmd)
        if self.args.dry_run:
            print(line)
            return {"rc": 0, "wall_s": 0.0, "command": line, "stdout": out_path}
        t0 = time.time()
        with open(out_path, "wb") as o, open(err_path, "wb") as e:
            rc = subprocess.call(cmd, stdout=o, stderr=e, cwd=ROOT)
        wall = time.time() - t0
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write(f"# {now()} rc={rc} wall_s={wall:.2f} cwd={ROOT}\n{line}\n")
        if rc != 0:
            with open(err_path, encoding="utf-8", errors="replace") as e:
                tail = e.read()[-2000:]
            raise RuntimeError(f"run_experiment: `{line}` failed (rc {rc}):\n{tail}")
        return {"rc": rc, "wall_s": wall, "command": line, "stdout": os.path.relpath(out_path, self.out)}

    def run_all(self, jobs):
        """Runs [(name, cmd, stdout_path or None)] on up to --jobs processes at once; results in order.

        On the GPU the processes share the device: a small model's step leaves it idle
        while each process does its host work, so several processes fill those gaps."""
        with ThreadPoolExecutor(max_workers=max(1, self.args.jobs)) as pool:
            futures = [pool.submit(self.run, *job) for job in jobs]
            return [f.result() for f in futures]

    # --- data subsets ------------------------------------------------------

    def subset(self, split, start, end):
        """OUT/data/SPLIT-START-END.jsonl: problems [start, end) of the split, byte-identical lines."""
        src = os.path.join(DATA, split + ".jsonl")
        path = os.path.join(self.out, "data", f"{split}-{start}-{end}.jsonl")
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(src, encoding="utf-8") as f:
                lines = [l for l in f if l.strip()]
            if end > len(lines):
                sys.exit(f"run_experiment: {split} has {len(lines)} problems, asked for {end}")
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(lines[start:end])
        return path

    def problems(self, split, start, end):
        with open(os.path.join(DATA, split + ".jsonl"), encoding="utf-8") as f:
            return [json.loads(l) for l in f if l.strip()][start:end]

    # --- eval ----------------------------------------------------------------

    def eval_config(self, group, name, weights, policy, split, n_problems, samples):
        """One configuration: `reset eval` per shard; returns its manifest entry."""
        a = self.args
        entry = self.manifest.setdefault(group, {}).get(name)
        want = {"weights": weights, "policy": policy, "split": split, "problems": n_problems,
                "samples": samples, "max_tokens": a.max_tokens, "backend": a.backend}
        if entry and not a.force and all(entry.get(k) == v for k, v in want.items()) and entry.get("complete"):
            print(f"[skip] {group}/{name}: done")
            return entry
        shard = a.shard_size or n_problems
        entry = dict(want, shards=[], complete=False)
        os.makedirs(os.path.join(self.out, group), exist_ok=True)
        shards = []
        for start in range(0, n_problems, shard):
            end = min(n_problems, start + shard)
            data = self.subset(split, start, end)
            tag = name if shard >= n_problems else f"{name}.{start:05d}"
            samples_path = os.path.join(self.out, group, tag + ".samples.jsonl")
            # reset eval seeds problem i's samples with S + i*N + k; a shard starting at
            # `start` passes S + start*N so every problem keeps the seed of an unsharded run.
            cmd = [a.reset, "eval", a.model, data, "--policy", policy, "--samples", str(samples),
                   "--seed", str(a.seed + start * samples),
                   "--max-tokens", str(a.max_tokens), "--out", samples_path] + self.base(weights)
            shards.append((start, end, data, tag, samples_path, cmd))
        print(f"[run] {group}/{name}: {weights}, {policy}, {n_problems} problems x {samples}"
              f" in {len(shards)} shard(s), {min(len(shards), a.jobs)} at a time", flush=True)
        # A shard that finished in an earlier, interrupted invocation is kept (its record is
        # written next to its samples the moment it ends).
        def shard_job(tag, samples_path, cmd):
            record = samples_path + ".run.json"
            if os.path.exists(record) and not a.force:
                with open(record, encoding="utf-8") as f:
                    return json.load(f)
            r = self.run(f"{group}.{tag}", cmd)
            if not a.dry_run:
                with open(record + ".tmp", "w", encoding="utf-8") as f:
                    json.dump(r, f)
                os.replace(record + ".tmp", record)
            return r

        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            futures = [pool.submit(shard_job, tag, samples_path, cmd) for _, _, _, tag, samples_path, cmd in shards]
            results = [f.result() for f in futures]
        for (start, end, data, tag, samples_path, cmd), r in zip(shards, results):
            tokens = n = 0
            if not a.dry_run:
                with open(samples_path, encoding="utf-8") as f:
                    for line in f:
                        tokens += json.loads(line)["tokens"]
                        n += 1
                if n != (end - start) * samples:
                    sys.exit(f"run_experiment: {samples_path} holds {n} samples, expected {(end - start) * samples}")
            r.update(offset=start, problems=end - start, samples_file=os.path.relpath(samples_path, self.out),
                     data=os.path.relpath(data, self.out), generated_tokens=tokens,
                     tokens_per_s=tokens / r["wall_s"] if r["wall_s"] > 0 else None)
            entry["shards"].append(r)
        tokens = sum(r["generated_tokens"] for r in entry["shards"])
        wall = sum(r["wall_s"] for r in entry["shards"])
        print(f"      {tokens} tokens, {wall:.1f} process-seconds", flush=True)
        entry["complete"] = True
        self.manifest[group][name] = entry
        self.save()
        return entry

    @staticmethod
    def accuracy(out_dir, entry):
        correct = total = 0
        for s in entry["shards"]:
            with open(os.path.join(out_dir, s["samples_file"]), encoding="utf-8") as f:
                for line in f:
                    r = json.loads(line)
                    correct += bool(r["correct"])
                    total += 1
        return correct / total if total else float("nan"), correct, total

    # --- steps ---------------------------------------------------------------

    def policy(self, kind, t_low=None, tau0=None):
        s = self.args.seed
        if kind == "greedy":
            return "greedy"
        if kind == "fixed":
            return f"fixed {self.args.temperature:g} top_p={self.args.top_p:g} seed={s}"
        return (f"{kind} t_low={t_low:g} tau0={tau0:.9g} t_high={self.args.t_high:g} "
                f"window={self.args.window} top_p={self.args.top_p:g} seed={s}")

    def step_calibrate(self):
        a = self.args
        cal = self.manifest.get("calibration")
        if cal and cal.get("complete") and not a.force and cal.get("problems") == a.calib_problems:
            print(f"[skip] calibrate: tau0 {cal['tau0']:.9g}")
            return cal
        n = a.calib_problems
        data = self.subset("calibration", 0, n)
        cal = {"problems": n, "weights": "w4a4", "percentile": 80, "seed": a.seed,
               "max_tokens": a.calib_max_tokens}
        cmd = [a.reset, "calibrate", a.model, data, "--limit", str(n), "--seed", str(a.seed),
               "--max-tokens", str(a.calib_max_tokens)] + self.base("w4a4")
        print(f"[run] calibrate: reset calibrate, W4A4, {n} calibration problems", flush=True)
        cal["reset_calibrate"] = self.run("calibrate", cmd)
        printed = None
        if not a.dry_run:
            with open(os.path.join(self.out, cal["reset_calibrate"]["stdout"]), encoding="utf-8") as f:
                text = f.read()
            cal["reset_calibrate"]["output"] = text
            for line in text.splitlines():
                if line.startswith("tau0 "):
                    printed = float(line.split()[1])
                    cal["reset_calibrate"]["tau0_printed"] = printed
                    cal["reset_calibrate"]["n_tokens"] = int(line.split("of ")[1].split()[0])
        # The same decoding through generate --jsonl, to read the entropies at full precision.
        os.makedirs(os.path.join(self.out, "calibration"), exist_ok=True)
        entropies = []
        problems = self.problems("calibration", 0, n)
        print(f"[run] calibrate: the same decoding with per-token traces ({n} generate runs)", flush=True)
        t0 = time.time()
        jobs, traces = [], []
        for i, p in enumerate(problems):
            trace = os.path.join(self.out, "calibration", f"{i:04d}.jsonl")
            cmd = [a.reset, "generate", a.model, p["problem"], "--policy",
                   f"fixed {a.temperature:g} top_p={a.top_p:g}", "--seed", str(a.seed + i),
                   "--max-tokens", str(a.calib_max_tokens), "--jsonl", trace] + self.base("w4a4")
            jobs.append((f"calibration.{i:04d}", cmd, os.path.join(self.out, "calibration", f"{i:04d}.txt")))
            traces.append(trace)
        self.run_all(jobs)
        if not a.dry_run:
            for trace in traces:  # in prompt order, as reset calibrate reads them
                with open(trace, encoding="utf-8") as f:
                    entropies += [json.loads(l)["entropy"] for l in f]
        cal["traces_wall_s"] = time.time() - t0
        if a.dry_run:
            cal["tau0"] = 0.001
            return cal
        cal["n_tokens"] = len(entropies)
        cal["tau0"] = percentile(entropies, 80)
        cal["entropy_mean"] = sum(entropies) / len(entropies)
        cal["percentiles"] = {str(q): percentile(entropies, q) for q in range(0, 101, 10)}
        ref = cal["reset_calibrate"].get("n_tokens")
        cal["agrees_with_reset_calibrate"] = (ref == len(entropies)
                                              and (printed is None or abs(printed - cal["tau0"]) <= 5.1e-5))
        if not cal["agrees_with_reset_calibrate"]:
            print(f"WARNING: traces give {len(entropies)} tokens, tau0 {cal['tau0']:.9g}; "
                  f"reset calibrate printed {ref} tokens, tau0 {printed}", flush=True)
        cal["complete"] = True
        self.manifest["calibration"] = cal
        self.save()
        print(f"      tau0 = {cal['tau0']:.9g} (p80 of {len(entropies)} entropies; reset calibrate printed "
              f"{printed} from {ref} tokens)", flush=True)
        return cal

    def choose(self, kind, tau0):
        a = self.args
        results = []
        for t in a.t_lows:
            e = self.eval_config("validation", f"{kind}-w4a4-tlow{t:g}", "w4a4", self.policy(kind, t, tau0),
                                 "validation", a.val_problems, a.val_samples)
            acc, c, n = self.accuracy(self.out, e) if not a.dry_run else (0.0, 0, 0)
            results.append({"t_low": t, "accuracy": acc, "correct": c, "samples": n})
            print(f"      {kind} T_low {t:g}: {c}/{n} = {100 * acc:.2f}%", flush=True)
        # Highest accuracy; exact ties -> the higher T_low.
        best = max(results, key=lambda r: (r["accuracy"], r["t_low"]))
        choice = {"kind": kind, "t_low": best["t_low"], "rule": "max validation accuracy; ties -> higher T_low",
                  "results": results, "problems": a.val_problems, "samples": a.val_samples}
        self.manifest.setdefault("t_low_choice", {})[kind] = choice
        self.save()
        print(f"      chosen T_low for {kind}: {best['t_low']:g}", flush=True)
        return best["t_low"]

    def configs(self, tau0, t_low_reset, t_low_entropy):
        S = self.args.samples
        return [
            ("bf16-t0.6", "bf16", self.policy("fixed"), S),
            ("w4a4-t0.6", "w4a4", self.policy("fixed"), S),
            ("w4a4-reset", "w4a4", self.policy("reset", t_low_reset, tau0), S),
            ("w4a4-entropy", "w4a4", self.policy("entropy", t_low_entropy, tau0), S),
            ("w4a16-t0.6", "w4a16", self.policy("fixed"), S),
            ("bf16-greedy", "bf16", self.policy("greedy"), 1),
            ("w4a16-greedy", "w4a16", self.policy("greedy"), 1),
            ("w4a4-greedy", "w4a4", self.policy("greedy"), 1),
        ]

    def step_traces(self, tau0, t_low):
        a = self.args
        tr = self.manifest.get("traces", {})
        want = {"prompts": a.trace_prompts, "reset_prompts": a.reset_traces, "max_tokens": a.max_tokens,
                "tau0": tau0, "t_low": t_low}
        if tr.get("complete") and not a.force and all(tr.get(k) == v for k, v in want.items()):
            print("[skip] traces: done")
            return
        tr = dict(want, runs={})
        problems = self.problems("test", 0, max(a.trace_prompts, a.reset_traces))
        jobs = [(f"{w}-t0.6", w, f"fixed {a.temperature:g} top_p={a.top_p:g}", a.trace_prompts) for w in a.trace_formats]
        jobs.append(("w4a4-reset", "w4a4", self.policy("reset", t_low, tau0).rsplit(" seed=", 1)[0], a.reset_traces))
        for name, weights, policy, count in jobs:
            d = os.path.join(self.out, "traces", name)
            os.makedirs(d, exist_ok=True)
            print(f"[run] traces {name}: {count} test prompts", flush=True)
            t0 = time.time()
            tokens = 0
            runs = []
            for i in range(count):
                trace = os.path.join(d, f"{i:04d}.jsonl")
                cmd = [a.reset, "generate", a.model, problems[i]["problem"], "--policy", policy,
                       "--seed", str(a.seed + i), "--max-tokens", str(a.max_tokens), "--jsonl", trace] + self.base(weights)
                runs.append((f"traces.{name}.{i:04d}", cmd, os.path.join(d, f"{i:04d}.txt")))
            self.run_all(runs)
            if not a.dry_run:
                for i in range(count):
                    with open(os.path.join(d, f"{i:04d}.jsonl"), encoding="utf-8") as f:
                        tokens += sum(1 for _ in f)
            tr["runs"][name] = {"weights": weights, "policy": policy, "prompts": count, "seeds": f"{a.seed}+i",
                                "dir": os.path.relpath(d, self.out), "tokens": tokens, "wall_s": time.time() - t0}
        tr["complete"] = True
        self.manifest["traces"] = tr
        self.save()

    def step_bench(self):
        a = self.args
        b = self.manifest.get("bench", {})
        if b.get("complete") and not a.force:
            print("[skip] bench: done")
            return
        b = {}
        for w in FORMATS:
            cmd = [a.reset, "bench", "decode", a.model, "--prompt-tokens", "64", "--tokens", "256",
                   "--repeat", "5", "--json"] + self.base(w)
            print(f"[run] bench decode {w}", flush=True)
            r = self.run(f"bench.{w}", cmd)
            if not a.dry_run:
                with open(os.path.join(self.out, r["stdout"]), encoding="utf-8") as f:
                    record = json.loads(f.readline())
                r["decode_tokens_per_s"] = record["tokens_per_s"]
                r["prefill_tokens_per_s"] = record["prefill_tokens_per_s"]
            b[w] = r
        b["complete"] = True
        self.manifest["bench"] = b
        self.save()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--reset", required=True, help="path of the reset binary")
    p.add_argument("--backend", required=True, choices=["cpu", "cuda", "auto"])
    p.add_argument("--out", required=True, help="output directory (created; reruns resume in it)")
    p.add_argument("--model", default=os.path.join(ROOT, "models", "default"))
    p.add_argument("--problems", type=int, default=2000, help="test problems (default 2000)")
    p.add_argument("--samples", type=int, default=8, help="samples per test problem (default 8)")
    p.add_argument("--val-problems", type=int, default=500, help="validation problems for T_low (default 500)")
    p.add_argument("--val-samples", type=int, default=8, help="samples per validation problem (default 8)")
    p.add_argument("--calib-problems", type=int, default=50, help="calibration problems (default all 50)")
    p.add_argument("--calib-max-tokens", type=int, default=4096, help="as reset_calibrate's default")
    p.add_argument("--max-tokens", type=int, default=4096,
                   help="new tokens per sample (default 4096 = the model's context; answers are ~190)")
    p.add_argument("--t-lows", default="0.1,0.2,0.3,0.4,0.6")
    p.add_argument("--t-high", type=float, default=1.0)
    p.add_argument("--window", type=int, default=32)
    p.add_argument("--temperature", type=float, default=0.6)
    p.add_argument("--top-p", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0, help="base seed S (policy seed; traces use S+i)")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--trace-prompts", type=int, default=200)
    p.add_argument("--trace-formats", default="bf16,w4a4")
    p.add_argument("--reset-traces", type=int, default=4, help="ReSET W4A4 traces for the temperature plot")
    p.add_argument("--shard-size", type=int, default=0, help="problems per eval process (0: one per config)")
    p.add_argument("--jobs", type=int, default=1,
                   help="processes run at once: a configuration's shards, the calibration and trace runs "
                        "(results do not depend on it: every process has its own seeds)")
    p.add_argument("--configs", default="", help="comma-separated subset of test configurations (default all)")
    p.add_argument("--steps", default="calibrate,validate,test,traces,bench")
    p.add_argument("--tune-entropy", action="store_true", help="choose entropy-only's T_low on validation too")
    p.add_argument("--force", action="store_true", help="redo steps whose outputs exist")
    p.add_argument("--dry-run", action="store_true", help="print the commands only")
    a = p.parse_args()
    a.reset = os.path.abspath(a.reset)
    a.model = os.path.abspath(a.model)
    a.t_lows = [float(t) for t in a.t_lows.split(",")]
    a.trace_formats = [f for f in a.trace_formats.split(",") if f]
    steps = set(a.steps.split(","))
    r = Runner(a)
    r.manifest.setdefault("started", now())
    r.manifest["invocations"] = r.manifest.get("invocations", []) + [shlex.join([sys.executable] + sys.argv)]
    r.manifest["settings"] = {k: v for k, v in vars(a).items() if k not in ("force", "dry_run")}
    r.manifest["data_sha256"] = {s: sha256(os.path.join(DATA, s + ".jsonl")) for s in ("test", "validation", "calibration")}
    if not a.dry_run:
        info = subprocess.run([a.reset, "--version"], capture_output=True, text=True)
        r.manifest["reset_version"] = info.stdout.strip()
        git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True)
        r.manifest["git"] = git.stdout.strip()
    r.save()

    try:
        run_steps(r, a, steps)
    except RuntimeError as e:
        sys.exit(str(e))


def run_steps(r, a, steps):
    tau0 = r.step_calibrate()["tau0"] if "calibrate" in steps or "calibration" not in r.manifest \
        else r.manifest["calibration"]["tau0"]
    choice = r.manifest.get("t_low_choice", {})
    if "validate" in steps or "reset" not in choice:
        t_low = r.choose("reset", tau0)
        t_low_entropy = r.choose("entropy", tau0) if a.tune_entropy else t_low
    else:
        t_low = choice["reset"]["t_low"]
        t_low_entropy = choice.get("entropy", {}).get("t_low", t_low) if a.tune_entropy else t_low
    r.manifest["chosen"] = {"tau0": tau0, "t_low_reset": t_low, "t_low_entropy": t_low_entropy}
    r.save()
    if "test" in steps:
        wanted = set(c for c in a.configs.split(",") if c)
        for name, weights, policy, samples in r.configs(tau0, t_low, t_low_entropy):
            if not wanted or name in wanted:
                r.eval_config("test", name, weights, policy, "test", a.problems, samples)
    if "traces" in steps:
        r.step_traces(tau0, t_low)
    if "bench" in steps:
        r.step_bench()
    r.manifest["finished"] = now()
    r.save()
    print(f"done: {r.out} (python3 training/report.py {r.out})")


if __name__ == "__main__":
    main()
