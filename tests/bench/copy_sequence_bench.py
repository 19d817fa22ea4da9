#!/usr/bin/env python3
"""copy_sequence_bench.py -- what reset_copy_sequence costs, against prefilling the same tokens again.

    PYTHONPATH=bindings/python RESET_LIBRARY=.../libreset.so.0 \\
        python3 tests/bench/copy_sequence_bench.py MODEL_DIR [--contexts 1024,4096,8192] [--kv bf16,fp8]
                                                   [--repeats 9] [--out FILE]

For each KV cache type and context n: a CUDA session of 2 sequences, sequence 0 prefilled with n
random ids (never zeros: ids drawn from the whole vocabulary).  Then, `repeats` times after one
warm-up each, and the median reported:
  copy     sequence 1 cut back to nothing, then reset_copy_sequence(0, 1): the KV rows and the
           logits copied on the device, the sampler state on the host;
  prefill  sequence 1 cut back to nothing, then the same n ids prefilled into it: what an
           application that branches a sequence does without the copy.
Host wall clock around the call alone (each returns after its device work: the copy and the
prefill synchronize their stream).  The copy's effective bandwidth counts the KV bytes read and
written.  After the copies, sequence 1's logits must equal sequence 0's bit for bit.
One JSON line per case, to --out (default stdout), with the device and the library version.
"""

import argparse
import array
import json
import random
import statistics
import subprocess
import sys
import time

import reset


def device_name():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--contexts", default="1024,4096,8192")
    parser.add_argument("--kv", default="bf16,fp8")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--out", default="-")
    parser.add_argument("--backend", default="cuda", help="cpu: a check of this script, not a measurement")
    args = parser.parse_args()
    contexts = [int(c) for c in args.contexts.split(",")]
    model = reset.Model(args.model, backend=args.backend)
    info = model.info()
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    rng = random.Random(34)
    for kv in args.kv.split(","):
        session = model.session(max_context=max(contexts) + 1, sequences=2, kv_cache=kv)
        session.set_policy("greedy")
        element = 2 if kv == "bf16" else 1
        for n in contexts:
            ids = [rng.randrange(info["vocab_size"]) for _ in range(n)]
            session.reset()
            session.prefill(ids[:1])  # a prompt for both, then sequence 0's own tokens
            session.truncate_sequence(1, 0)
            session.prefill_sequence(0, ids[1:])
            copies, prefills = [], []
            for i in range(args.repeats + 1):
                session.truncate_sequence(1, 0)
                t = timed(lambda: session.copy_sequence(0, 1))
                if i:
                    copies.append(t)
                session.truncate_sequence(1, 0)
                t = timed(lambda: session.prefill_sequence(1, ids))
                if i:
                    prefills.append(t)
            session.truncate_sequence(1, 0)
            session.copy_sequence(0, 1)
            def bits(row):  # float32 bytes, whether the binding returns numpy arrays or lists
                return array.array("f", row).tobytes()
            same = bits(session.logits(0)) == bits(session.logits(1)) and session.tokens(1) == session.tokens(0)
            kv_bytes = n * info["n_layers"] * info["n_kv_heads"] * info["head_dim"] * 2 * element
            copy_s, prefill_s = statistics.median(copies), statistics.median(prefills)
            record = {"device": device_name(), "library": reset.VERSION, "backend": args.backend, "model": args.model,
                      "kv_cache": kv, "context": n, "repeats": args.repeats, "copy_ms": round(copy_s * 1e3, 4),
                      "prefill_ms": round(prefill_s * 1e3, 3), "prefill_over_copy": round(prefill_s / copy_s, 1),
                      "kv_bytes": kv_bytes, "copy_gb_per_s": round(2 * kv_bytes / copy_s / 1e9, 1),
                      "copy_equal_bit_for_bit": same}
            out.write(json.dumps(record) + "\n")
            out.flush()
            if not same:
                sys.exit(f"copy_sequence_bench: the copy's logits or tokens differ at context {n} ({kv})")


if __name__ == "__main__":
    main()
