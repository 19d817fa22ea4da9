#!/usr/bin/env python3
"""Report of the ReSET experiment: reads the output directory of run_experiment.py and writes
training/results/experiment.md with two PNG plots beside it.

    python3 training/report.py OUT_DIR [--results training/results]

Needs numpy and matplotlib (training/requirements-report.txt).

Intervals.  The samples of one problem are correlated (same prompt, and the
problem's difficulty), so a Wilson interval over problems x samples would be too
narrow.  The table gives a percentile bootstrap over problems (problems resampled
with replacement, all samples of a drawn problem kept; 10,000 resamples, seeded);
the normal interval that `reset eval` prints (mean of per-problem accuracies
+- 1.96 sd/sqrt(P), cluster-robust by the same reasoning) is kept as a check.
Differences between configurations are paired over problems (the same problem
resampled in both), which is valid because all configurations ran on the same
problems.
"""
import argparse
import glob
import json
import math
import os
import shlex
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
B = 10000
# Binary entropy of 0.05 (nats): below it the top token holds more than 0.95 of the mass.
H_TOP_P = -(0.95 * math.log(0.95) + 0.05 * math.log(0.05))
LABELS = {
    "bf16-t0.6": "BF16, T = 0.6, top-p 0.95",
    "w4a4-t0.6": "NVFP4 W4A4 (RTN), T = 0.6, top-p 0.95 — the NVFP4 baseline",
    "w4a4-reset": "NVFP4 W4A4 + ReSET",
    "w4a4-entropy": "NVFP4 W4A4 + token-entropy-only thresholding",
    "w4a16-t0.6": "NVFP4 W4A16, T = 0.6, top-p 0.95",
    "bf16-greedy": "BF16, greedy",
    "w4a16-greedy": "NVFP4 W4A16, greedy",
    "w4a4-greedy": "NVFP4 W4A4, greedy",
}
FORMAT_OF = {"bf16": "bf16", "w4a16": "w4a16", "w4a4": "w4a4"}


def load_samples(out, entry):
    rows = []
    for shard in entry["shards"]:
        with open(os.path.join(out, shard["samples_file"]), encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                r["problem"] += shard["offset"]
                rows.append(r)
    return rows


def per_problem(rows, n_problems):
    correct = np.zeros(n_problems)
    count = np.zeros(n_problems)
    for r in rows:
        correct[r["problem"]] += bool(r["correct"])
        count[r["problem"]] += 1
    return correct / np.maximum(count, 1)


def bootstrap(values, rng_seed=0):
    """Percentile bootstrap over problems of the mean of `values` (one per problem)."""
    rng = np.random.default_rng(rng_seed)
    n = len(values)
    means = np.empty(B)
    for start in range(0, B, 1000):
        idx = rng.integers(0, n, size=(min(1000, B - start), n))
        means[start:start + idx.shape[0]] = values[idx].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def normal_interval(values):
    n = len(values)
    m = float(values.mean())
    if n < 2:
        return m, m
    half = 1.959964 * float(values.std(ddof=1)) / math.sqrt(n)
    return max(0.0, m - half), min(1.0, m + half)


def pct(x):
    return f"{100 * x:.2f}"


def summarise(out, entry):
    rows = load_samples(out, entry)
    n = entry["problems"]
    pp = per_problem(rows, n)
    tokens = np.array([r["tokens"] for r in rows], dtype=float)
    wall = sum(s["wall_s"] for s in entry["shards"])
    gen = sum(s["generated_tokens"] for s in entry["shards"])
    return {
        "rows": rows, "per_problem": pp, "accuracy": float(pp.mean()),
        "correct": int(sum(bool(r["correct"]) for r in rows)), "samples": len(rows),
        "boot": bootstrap(pp), "normal": normal_interval(pp),
        "mean_tokens": float(tokens.mean()), "max_tokens": int(tokens.max()),
        "finished": float(np.mean([bool(r["finished"]) for r in rows])),
        "no_answer": float(np.mean([r["extracted"] is None for r in rows])),
        "wall_s": wall, "tokens_per_s": gen / wall if wall > 0 else float("nan"),
    }


def load_traces(out, run):
    traces = []
    for path in sorted(glob.glob(os.path.join(out, run["dir"], "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            traces.append([json.loads(l) for l in f])
    return traces


def entropy_plot(bf16, w4a4, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    floor = 1e-10
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    bins = np.linspace(-10, 1, 111)
    for values, label, colour in ((bf16, "BF16", "tab:blue"), (w4a4, "NVFP4 W4A4", "tab:red")):
        lv = np.log10(np.maximum(values, floor))
        axes[0].hist(lv, bins=bins, histtype="step", density=True, label=f"{label} ({len(values)} tokens)",
                     color=colour, linewidth=1.4)
        xs = np.sort(lv)
        axes[1].plot(xs, 1 - np.arange(len(xs)) / len(xs), label=label, color=colour)
    axes[0].set_xlabel("log10 token entropy (nats; values below 1e-10 shown at -10)")
    axes[0].set_ylabel("density")
    axes[0].set_title("Token entropy of raw logits, T = 0.6 generations on test prompts")
    axes[0].legend()
    axes[1].set_yscale("log")
    axes[1].set_xlabel("log10 token entropy (nats)")
    axes[1].set_ylabel("fraction of tokens with entropy >= x")
    axes[1].set_title("Tail (survival function)")
    axes[1].legend()
    axes[1].grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def temperature_plot(trace, t_low, t_high, tau0, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    x = np.arange(len(trace))
    h = np.array([max(r["entropy"] or 0, 1e-10) for r in trace])
    thr = np.array([max(r["threshold"] or 0, 1e-10) for r in trace])
    step_h = np.array([max(r["step_entropy"] or 0, 1e-10) for r in trace])
    temp = np.array([r["temperature"] for r in trace])
    boundaries = [i for i, r in enumerate(trace) if r["boundary"]]
    uncertain = np.array([bool(r["uncertain"]) for r in trace])
    fig, (a0, a1) = plt.subplots(2, 1, figsize=(13, 6.5), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    a0.semilogy(x, h, ".", ms=3, color="black", label="token entropy H_t")
    a0.semilogy(x, step_h, "-", lw=0.8, color="tab:green", label="step estimate Ĥ")
    a0.semilogy(x, thr, "-", lw=1.2, color="tab:orange", label="threshold τ (τ0 or Ĥ)")
    a0.axhline(tau0, ls=":", color="tab:orange", lw=0.8)
    a0.set_ylabel("nats (floor 1e-10)")
    a0.legend(loc="upper right", fontsize=8)
    a0.set_title(title)
    a1.step(x, temp, where="mid", color="tab:red")
    a1.fill_between(x, 0, 1.05, where=uncertain, color="tab:purple", alpha=0.15, step="mid",
                    label="uncertain step (Ĥ > H̄)")
    a1.set_ylim(0, max(1.05, t_high * 1.05))
    a1.set_yticks(sorted({0, t_low, 0.6, t_high}))
    a1.set_ylabel("temperature")
    a1.set_xlabel("generated token")
    a1.legend(loc="upper right", fontsize=8)
    for b in boundaries:
        a0.axvline(b, color="grey", lw=0.4, alpha=0.5)
        a1.axvline(b, color="grey", lw=0.4, alpha=0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def describe_entropies(values):
    v = np.asarray(values)
    return {"tokens": len(v), "mean": float(v.mean()), "median": float(np.median(v)),
            "p80": float(np.percentile(v, 80)), "p99": float(np.percentile(v, 99)),
            "gt_0.01": float(np.mean(v > 0.01)), "gt_0.1": float(np.mean(v > 0.1)),
            "gt_tau0": None}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="the output directory of run_experiment.py")
    p.add_argument("--results", default=os.path.join(HERE, "results"), help="where experiment.md and the PNGs go")
    a = p.parse_args()
    out = os.path.abspath(a.out)
    with open(os.path.join(out, "manifest.json"), encoding="utf-8") as f:
        m = json.load(f)
    os.makedirs(a.results, exist_ok=True)
    s = m["settings"]
    chosen = m.get("chosen", {})
    tau0 = chosen.get("tau0")
    full = s["problems"] >= 2000 and s["samples"] >= 8 and s["max_tokens"] >= 4096
    L = []
    w = L.append
    w("# ReSET on reset-arith-4m: BF16, NVFP4 W4A4 / W4A16, ReSET and its ablation\n")
    if not full:
        w(f"> **SMOKE RUN, NOT THE EXPERIMENT**: {s['problems']} test problems x {s['samples']} samples, "
          f"at most {s['max_tokens']} new tokens. Numbers below test the pipeline only.\n")
    w(f"Backend `{s['backend']}`; {m.get('reset_version', '?')}; source `{m.get('git', '?')}`; "
      f"run {m.get('started', '?')} – {m.get('finished', 'unfinished')}. Model `models/default` "
      f"(reset-arith-4m, 4.33M parameters). Data sha256: "
      + ", ".join(f"{k} `{v[:12]}`" for k, v in m.get("data_sha256", {}).items()) + ".\n")

    # --- main table ---------------------------------------------------------
    test = m.get("test", {})
    summaries = {name: summarise(out, e) for name, e in test.items() if e.get("complete")}
    bench = m.get("bench", {})
    w("## Test split\n")
    w(f"{s['problems']} held-out test problems; sampled configurations {s['samples']} samples per problem "
      f"(parallel sequences of one `reset eval` session, policy seed {s['seed']}), greedy ones 1 sample; "
      f"at most {s['max_tokens']} new tokens; top-p {s['top_p']}. Accuracy is the mean over samples.\n")
    w("| configuration | policy (as given to `reset eval`) | samples | accuracy % | 95% bootstrap over problems | "
      "normal, over problems (as `reset eval`) | mean generated tokens | ended with EOS % | no `\\boxed{}` % | "
      "eval throughput, tokens/s | batch-1 decode tokens/s (`bench decode`) |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, e in sorted(test.items(), key=lambda kv: list(LABELS).index(kv[0]) if kv[0] in LABELS else 99):
        if name not in summaries:
            continue
        r = summaries[name]
        b = bench.get(e["weights"], {}).get("decode_tokens_per_s")
        w(f"| {LABELS.get(name, name)} | `{e['policy']}` | {r['samples']} | **{pct(r['accuracy'])}** | "
          f"{pct(r['boot'][0])}–{pct(r['boot'][1])} | {pct(r['normal'][0])}–{pct(r['normal'][1])} | "
          f"{r['mean_tokens']:.1f} | {100 * r['finished']:.1f} | {100 * r['no_answer']:.2f} | "
          f"{r['tokens_per_s']:.0f} | {'%.0f' % b if b else '–'} |")
    w("")
    w("*Eval throughput* = generated tokens / wall time of the `reset eval` process(es) of that row "
      "(model load and quantization, prefill, and decoding of "
      f"{min(8, s['samples'])} parallel sequences included; `reset eval` does not report decode speed itself). "
      "*Batch-1 decode* = `reset bench decode` (greedy, 64 prompt ids, 256 decoded, median of 5) for the "
      "row's weight format; it does not include the sampler's policy.\n")

    # Paired differences.
    pairs = [("w4a4-reset", "w4a4-t0.6"), ("w4a4-entropy", "w4a4-t0.6"), ("w4a4-reset", "w4a4-entropy"),
             ("bf16-t0.6", "w4a4-t0.6"), ("w4a16-t0.6", "w4a4-t0.6"), ("w4a4-reset", "bf16-t0.6"),
             ("w4a4-greedy", "w4a4-t0.6"), ("bf16-greedy", "w4a4-greedy")]
    diffs = {}
    rows = []
    for x, y in pairs:
        if x in summaries and y in summaries:
            d = summaries[x]["per_problem"] - summaries[y]["per_problem"]
            lo, hi = bootstrap(d, 1)
            diffs[(x, y)] = (float(d.mean()), lo, hi)
            better = int(np.sum(d > 0))
            worse = int(np.sum(d < 0))
            tx = {(r["problem"], r["sample"]): r["text"] for r in summaries[y]["rows"]}
            same = np.mean([tx.get((r["problem"], r["sample"])) == r["text"] for r in summaries[x]["rows"]])
            rows.append(f"| {x} − {y} | {100 * d.mean():+.2f} | {100 * lo:+.2f} to {100 * hi:+.2f} | "
                        f"{better} / {worse} | {100 * same:.1f} |")
    if rows:
        w("### Paired differences (percentage points, paired bootstrap over problems)\n")
        w("| difference | points | 95% interval | problems better / worse | same text, same (problem, sample) % |")
        w("|---|---|---|---|---|")
        L.extend(rows)
        w("")

    # --- calibration and validation -----------------------------------------
    cal = m.get("calibration", {})
    w("## τ0 (calibration split) and T_low (validation split)\n")
    if cal:
        rc = cal.get("reset_calibrate", {})
        w(f"τ0 = **{cal.get('tau0', float('nan')):.6g}** nats: the 80th percentile of the raw-logit entropies of "
          f"{cal.get('n_tokens')} tokens generated by NVFP4 W4A4 on {cal['problems']} calibration problems "
          f"(T = 0.6, top-p 0.95, seed {cal['seed']} + problem index; every token, EOS included; "
          f"mean entropy {cal.get('entropy_mean', float('nan')):.3g} nats). `reset calibrate` on the same problems "
          f"printed τ0 = {rc.get('tau0_printed')} from {rc.get('n_tokens')} tokens; τ0 was read at full "
          f"precision from the same decoding through `reset generate --jsonl` (token counts and τ0 "
          f"{'agree' if cal.get('agrees_with_reset_calibrate') else 'DO NOT agree'}). "
          "Entropy-only thresholding uses the same τ0.\n")
        if cal.get("percentiles"):
            w("Percentiles of the calibration entropies (nats): " + ", ".join(
                f"p{q} {v:.3g}" for q, v in sorted(cal["percentiles"].items(), key=lambda kv: int(kv[0]))) + ".\n")
    for kind, c in m.get("t_low_choice", {}).items():
        w(f"T_low for **{kind}** (W4A4, T_high {s['t_high']}, w {s['window']}, τ0 above) on the first "
          f"{c['problems']} validation problems × {c['samples']} samples; rule: {c['rule']}. "
          f"Chosen: **T_low = {c['t_low']:g}**.\n")
        w("| T_low | accuracy % | correct / samples | 95% bootstrap over problems | mean tokens | "
          "texts identical to the chosen T_low's % |")
        w("|---|---|---|---|---|---|")
        sms = {r["t_low"]: summarise(out, m["validation"][f"{kind}-w4a4-tlow{r['t_low']:g}"]) for r in c["results"]}
        ref = {(x["problem"], x["sample"]): x["text"] for x in sms[c["t_low"]]["rows"]}
        for r in c["results"]:
            sm = sms[r["t_low"]]
            same = np.mean([ref.get((x["problem"], x["sample"])) == x["text"] for x in sm["rows"]])
            mark = " ←" if r["t_low"] == c["t_low"] else ""
            w(f"| {r['t_low']:g}{mark} | {pct(r['accuracy'])} | {r['correct']} / {r['samples']} | "
              f"{pct(sm['boot'][0])}–{pct(sm['boot'][1])} | {sm['mean_tokens']:.1f} | {100 * same:.1f} |")
        w("")
    if "entropy" not in m.get("t_low_choice", {}):
        w("Entropy-only thresholding uses ReSET's T_low (the paper's ablation: the step gate off, all else equal).\n")

    # --- traces and plots ----------------------------------------------------
    tr = m.get("traces", {})
    ent = {}
    if tr.get("complete"):
        w("## Entropy and temperature (per-token traces)\n")
        for name in ("bf16-t0.6", "w4a4-t0.6"):
            if name in tr["runs"]:
                traces = load_traces(out, tr["runs"][name])
                ent[name] = np.array([r["entropy"] or 0.0 for t in traces for r in t])
        if "bf16-t0.6" in ent and "w4a4-t0.6" in ent:
            png = os.path.join(a.results, "entropy_bf16_vs_w4a4.png")
            entropy_plot(ent["bf16-t0.6"], ent["w4a4-t0.6"], png)
            w(f"![entropy distributions]({os.path.basename(png)})\n")
            w(f"Traces: `reset generate --jsonl` on the first {tr['prompts']} test prompts, T = 0.6, top-p 0.95, "
              "seed S + prompt index, each model on its own generations; entropy of the raw logits.\n")
            w("| weights | tokens | mean | median | p80 | p99 | > 0.01 nats % | > 0.1 nats % | ≥ τ0 % | "
              f"≥ {H_TOP_P:.4f} nats % (could be sampled at all) |")
            w("|---|---|---|---|---|---|---|---|---|---|")
            for name, label in (("bf16-t0.6", "BF16"), ("w4a4-t0.6", "NVFP4 W4A4")):
                d = describe_entropies(ent[name])
                above = float(np.mean(ent[name] >= tau0)) if tau0 is not None else float("nan")
                w(f"| {label} | {d['tokens']} | {d['mean']:.3g} | {d['median']:.3g} | {d['p80']:.3g} | "
                  f"{d['p99']:.3g} | {100 * d['gt_0.01']:.2f} | {100 * d['gt_0.1']:.2f} | {100 * above:.2f} | "
                  f"{100 * float(np.mean(ent[name] >= H_TOP_P)):.2f} |")
            w("")
            w(f"A token whose raw entropy is below h(0.05) = {H_TOP_P:.4f} nats has a top probability above 0.95 "
              "(for p_top ≥ 0.5, H ≥ the binary entropy of p_top; below 0.5, H > ln 2). A temperature ≤ 1 only "
              "sharpens it, so top-p 0.95 keeps the argmax alone: such a token is the greedy token under *every* "
              "configuration here (T = 0.6, T_low, T_high = 1.0). Only the last column's tokens can differ.\n")
        if "w4a4-reset" in tr["runs"]:
            traces = load_traces(out, tr["runs"]["w4a4-reset"])
            allr = [r for t in traces for r in t]
            if allr:
                t_low = chosen.get("t_low_reset")
                # The plotted trace: the first one (prompt 0), fixed in advance.
                png = os.path.join(a.results, "reset_temperature_trace.png")
                temperature_plot(traces[0], t_low, s["t_high"], tau0,
                                 f"ReSET on NVFP4 W4A4, test prompt 0 (T_low {t_low:g}, T_high {s['t_high']:g}, "
                                 f"τ0 {tau0:.3g}, w {s['window']})", png)
                w(f"![per-token temperature]({os.path.basename(png)})\n")
                hi = np.mean([r["temperature"] >= s["t_high"] - 1e-6 for r in allr])
                unc = np.mean([bool(r["uncertain"]) for r in allr])
                w(f"Over the {len(traces)} ReSET W4A4 traces ({len(allr)} tokens): {100 * hi:.1f}% of tokens drawn at "
                  f"T_high, {100 * unc:.1f}% in steps judged uncertain (Ĥ > H̄). The plot shows test prompt 0.\n")

    # --- what the numbers say ------------------------------------------------
    w("## What the numbers show\n")
    def say(x, y, what):
        if (x, y) not in diffs:
            return
        d, lo, hi = diffs[(x, y)]
        if lo > 0:
            verdict = "better, and the 95% interval excludes zero"
        elif hi < 0:
            verdict = "worse, and the 95% interval excludes zero"
        else:
            verdict = "not distinguishable from zero at this scale"
        w(f"- {what}: {100 * d:+.2f} points (95% {100 * lo:+.2f} to {100 * hi:+.2f}) — {verdict}.")
    say("bf16-t0.6", "w4a4-t0.6", "What NVFP4 W4A4 loses against BF16 (BF16 − W4A4, T = 0.6)")
    say("w4a16-t0.6", "w4a4-t0.6", "W4A16 − W4A4 (the share of the loss due to 4-bit activations)")
    say("w4a4-reset", "w4a4-t0.6", "ReSET − NVFP4 baseline")
    say("w4a4-entropy", "w4a4-t0.6", "Token-entropy-only − NVFP4 baseline")
    say("w4a4-reset", "w4a4-entropy", "ReSET − token-entropy-only (the step gate's contribution)")
    say("w4a4-greedy", "w4a4-t0.6", "Greedy − T = 0.6 on W4A4")
    if "bf16-t0.6" in ent and "w4a4-t0.6" in ent:
        b, q = ent["bf16-t0.6"], ent["w4a4-t0.6"]
        w(f"- Entropy: the median token entropy is {np.median(b):.2g} nats (BF16) and {np.median(q):.2g} (W4A4); "
          f"{100 * np.mean(b > 0.1):.2f}% / {100 * np.mean(q > 0.1):.2f}% of tokens exceed 0.1 nats. At an entropy "
          f"below {H_TOP_P:.4f} nats the token is the argmax under every configuration (top-p 0.95, T ≤ 1; see "
          f"above): {100 * np.mean(b >= H_TOP_P):.2f}% (BF16) / {100 * np.mean(q >= H_TOP_P):.2f}% (W4A4) of tokens "
          "can be sampled at all. T_low acts only on tokens below the threshold, which are almost all deterministic "
          "already; ReSET's effect is to raise the rare uncertain tokens (the decision points) to T_high = 1.0.")
    w("")
    w("These bullet points are computed by `training/report.py` from the data; the discussion of *why* is in "
      "the text the experiment's author adds below, and must agree with them.\n")
    discussion = os.path.join(a.results, "discussion.md")
    if os.path.exists(discussion):
        with open(discussion, encoding="utf-8") as f:
            w(f.read().rstrip("\n") + "\n")

    # --- reproduce ------------------------------------------------------------
    w("## Reproduce\n")
    w("From the repository root (python3 and the `reset` binary only; resumable; each `reset` command it ran is in "
      "`OUT/commands.log` with its exit status and wall time):\n")
    w("```")
    for inv in m.get("invocations", []):
        w(inv)
    w(f"python3 training/report.py {shlex.quote(a.out)}" + ("" if os.path.abspath(a.results) == os.path.join(HERE, "results")
                                                             else f" --results {shlex.quote(a.results)}"))
    w("```\n")
    w("The commands of the run (the `reset generate` calls of the calibration traces and of the plots are "
      "shown once each; all are in `commands.log`):\n")
    w("```")
    seen = set()
    log = os.path.join(out, "commands.log")
    if os.path.exists(log):
        with open(log, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#"):
                    continue
                words = shlex.split(line)
                kind = words[1] if len(words) > 1 else ""
                if kind == "generate":
                    key = os.path.dirname(words[words.index("--jsonl") + 1]) if "--jsonl" in words else line
                    if key in seen:
                        continue
                    seen.add(key)
                w(line)
    w("```")
    md = os.path.join(a.results, "experiment.md")
    with open(md, "w", encoding="utf-8") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {md}")


if __name__ == "__main__":
    main()
