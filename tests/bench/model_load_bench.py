#!/usr/bin/env python3
"""model_load_bench.py -- how long reset_model_load takes on the CUDA backend, and what the loaded
model computes, for A/B runs of two libraries on the same checkpoint.

    PYTHONPATH=bindings/python RESET_LIBRARY=.../libreset.so.0 \\
        python3 tests/bench/model_load_bench.py MODEL_DIR [--repeats 3] [--label NAME] [--out FILE]
            [--file-access map|read] [--cold]

Loads the model `repeats` times after one warm-up load (the checkpoint then sits in the page cache:
this measures the library, not the disk), host wall clock around reset_model_load, and reports the
median.  --cold instead evicts the checkpoint's files from the page cache before every load
(posix_fadvise DONTNEED, which needs no privilege): the disk's part included.  --file-access is
reset_model_options.file_access (0.12): the files mapped, or read whole into memory.  Its progress callback splits each load in two: `read` ends when the checkpoint's tensors
are read (reset_model_options.progress reports 1.0 at the end of the weights' loading, before
any device work), `device` is the rest (the GEMV layout's repack and the upload; the tokenizer).  Then prefills 64 random ids (seeded, never zeros) and reports a SHA-256 of the last
position's logits as bytes: two libraries that upload the same weights give the same digest.
One JSON line, to --out (default stdout), with the device and the library version.
"""

import argparse
import array
import hashlib
import json
import os
import random
import resource
import statistics
import sys
import time

import ctypes

import reset
from copy_sequence_bench import device_name  # this directory: the same device line
from reset import _lib


def evict(path):
    """Asks the kernel to drop the checkpoint's pages from the page cache (clean pages go)."""
    for name in os.listdir(path):
        if name.endswith(".safetensors"):
            fd = os.open(os.path.join(path, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def resident_mib():
    """The process's resident memory now (VmRSS), MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None


def timed_load(path, backend, file_access):
    """reset_model_load with a progress callback; returns (model, seconds to read, seconds in all)."""
    read_done = []

    def progress(fraction, _user_data):
        if fraction >= 1.0 and not read_done:
            read_done.append(time.perf_counter())
        return 0

    callback = _lib.PROGRESS_CALLBACK(progress)  # alive until the load returns
    options = _lib.ModelOptions()
    _lib.lib.reset_model_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
    options.backend = _lib.BACKENDS[backend]
    options.file_access = _lib.FILE_ACCESSES[file_access]
    options.progress = ctypes.cast(callback, ctypes.c_void_p)
    handle = ctypes.c_void_p()
    start = time.perf_counter()
    _lib.check(_lib.lib.reset_model_load(_lib.c_path(path), ctypes.byref(options), ctypes.byref(handle)))
    end = time.perf_counter()
    _lib.lib.reset_model_free(handle)
    return read_done[0] - start, end - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="-")
    parser.add_argument("--backend", default="cuda", help="cpu: a check of this script, not a measurement")
    parser.add_argument("--file-access", choices=sorted(_lib.FILE_ACCESSES), default="map")
    parser.add_argument("--cold", action="store_true", help="evict the files from the page cache before each load")
    args = parser.parse_args()
    times, reads = [], []
    for i in range(args.repeats + 1):
        if args.cold:
            evict(args.model)
        read, elapsed = timed_load(args.model, args.backend, args.file_access)
        if i:
            times.append(elapsed)
            reads.append(read)
    model = reset.Model(args.model, backend=args.backend, file_access=args.file_access)
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
        "load_median_s": round(statistics.median(times), 3), "read_s": [round(t, 3) for t in reads],
        "read_median_s": round(statistics.median(reads), 3),
        "device_median_s": round(statistics.median([t - r for t, r in zip(times, reads)]), 3),
        "logits_sha256": digest, "file_access": args.file_access, "cold": args.cold,
        # With the model loaded and used: a CUDA model holds no mapping or copy of the files now.
        "rss_loaded_mib": resident_mib(),
        # The process's peak resident memory (Linux: KiB): with --backend cpu, what the weights
        # cost the host; mapped checkpoint pages count once touched.
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    out = sys.stdout if args.out == "-" else open(args.out, "a")
    print(json.dumps(record), file=out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
