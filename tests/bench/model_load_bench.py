#!/usr/bin/env python3
"""model_load_bench.py -- how long reset_model_load takes on the CUDA backend, and what the loaded
model computes, for A/B runs of two libraries on the same checkpoint.

    PYTHONPATH=bindings/python RESET_LIBRARY=.../libreset.so.0 \\
        python3 tests/bench/model_load_bench.py MODEL_DIR [--repeats 3] [--label NAME] [--out FILE]

Loads the model `repeats` times after one warm-up load (the checkpoint then sits in the page cache:
this measures the library, not the disk), host wall clock around reset.Model(...), and reports the
median.  Then prefills 64 random ids (seeded, never zeros) and reports a SHA-256 of the last
position's logits as bytes: two libraries that upload the same weights give the same digest.
One JSON line, to --out (default stdout), with the device and the library version.
"""

import argparse
import array
import hashlib
import json
import os
import random
import statistics
import sys
import time

import reset
from copy_sequence_bench import device_name  # this directory: the same device line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="-")
    parser.add_argument("--backend", default="cuda", help="cpu: a check of this script, not a measurement")
    args = parser.parse_args()
    times = []
    for i in range(args.repeats + 1):
        start = time.perf_counter()
        model = reset.Model(args.model, backend=args.backend)
        elapsed = time.perf_counter() - start
        if i:
            times.append(elapsed)
        if i < args.repeats:
            model.close()
    info = model.info()
    rng = random.Random(36)
    ids = [rng.randrange(1, info["vocab_size"]) for _ in range(64)]
    session = model.session(max_context=128)
    session.prefill(ids)
    digest = hashlib.sha256(array.array("f", session.logits(0)).tobytes()).hexdigest()
    record = {
        "bench": "model_load", "label": args.label, "device": device_name(), "library": reset.VERSION,
        "model": os.path.basename(os.path.normpath(args.model)), "weight_bytes": info["weight_bytes"],
        "repeats": args.repeats, "load_s": [round(t, 3) for t in times],
        "load_median_s": round(statistics.median(times), 3), "logits_sha256": digest,
    }
    out = sys.stdout if args.out == "-" else open(args.out, "a")
    print(json.dumps(record), file=out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
