#!/usr/bin/env python3
"""sequence_file_bench.py -- what reset_save_sequence and reset_load_sequence cost, against prefilling
the same tokens again, and whether the file is what docs/sequence-file.md says to an independent
safetensors reader.

    PYTHONPATH=bindings/python RESET_LIBRARY=.../libreset.so.0 \\
        python3 tests/bench/sequence_file_bench.py MODEL_DIR [--contexts 1024,4096,8192] [--kv bf16,fp8]
                                                   [--repeats 5] [--dir /tmp] [--out FILE]

For each KV cache type and context n: a session of 2 sequences, sequence 0 prefilled with n random
ids (drawn from the whole vocabulary, never zeros).  Then, `repeats` times after one warm-up each,
and the median reported:
  save     reset_save_sequence(0, FILE): the KV rows and logits read from the device, written to a
           new file, fsync'd and renamed;
  load     sequence 1 cut back to nothing, then reset_load_sequence(1, FILE): the file mapped,
           checked, and its rows written to the device.  The file was just written, so it is read
           from the page cache: a cold read from disk is bounded by the disk instead;
  prefill  sequence 1 cut back to nothing, then the same n ids prefilled into it;
  save_memory, load_memory (0.9)  the same through memory: reset_save_sequence_to_memory into a
           buffer this script allocates once (the size asked first, outside the clock), and
           reset_load_sequence_from_memory from it (no file, no mapping, no fsync);
  read     the file read into memory by Python (a reference for what the page cache gives).
Host wall clock around each call.  After the loads, sequence 1's tokens and logits must equal
sequence 0's bit for bit, and the bytes saved to memory must be the file's.  Then the file is opened with the `safetensors` package (not libreset):
its metadata, every tensor's dtype and shape, and the tokens must be as docs/sequence-file.md says.
One JSON line per case, to --out (default stdout), with the device and the library version.
"""

import argparse
import array
import json
import os
import random
import statistics
import sys

import ctypes

import reset
from reset._lib import check, lib
from copy_sequence_bench import device_name, timed  # this directory: the same device line and clock


def memory_buffer(session):
    """A bytearray sized for sequence 0's state, and a call that saves the state into it
    (reset_save_sequence_to_memory through the binding's ctypes handle)."""
    size = ctypes.c_size_t(0)
    lib.reset_save_sequence_to_memory(session.handle, 0, None, 0, ctypes.byref(size))
    image = bytearray(size.value)
    array = (ctypes.c_char * len(image)).from_buffer(image)

    def fill():
        check(lib.reset_save_sequence_to_memory(session.handle, 0, array, len(image), ctypes.byref(size)))
    return image, fill


def check_with_safetensors(path, info, ids, kv):
    """The file as an independent reader sees it; returns what it checked, or raises AssertionError."""
    from safetensors import safe_open
    dtype = {"bf16": "BF16", "fp8": "F8_E4M3"}[kv]
    with safe_open(path, framework="numpy") as f:
        meta = f.metadata()
        assert meta["format"] == "libreset.sequence" and meta["format_version"] == "1", meta
        assert int(meta["length"]) == len(ids) and meta["kv_cache"] == kv and meta["has_logits"] == "1", meta
        assert int(meta["layers"]) == info["n_layers"] and int(meta["vocab_size"]) == info["vocab_size"], meta
        names = set(f.keys())
        want = {"tokens", "logits", "sampler.ring", "sampler.generation", "sampler.context", "held",
                "stream.pending"} | {f"layers.{i}.{p}" for i in range(info["n_layers"]) for p in ("keys", "values")}
        assert names == want, sorted(names ^ want)
    # Shapes and dtypes from the header itself (numpy has no BF16 or FP8 to load them into).
    with open(path, "rb") as raw:
        n = int.from_bytes(raw.read(8), "little")
        header = json.loads(raw.read(n))
    kv_heads = int(header["__metadata__"]["kv_heads"])
    head_dim = int(header["__metadata__"]["head_dim"])
    for i in range(info["n_layers"]):
        for part in ("keys", "values"):
            t = header[f"layers.{i}.{part}"]
            assert t["dtype"] == dtype and t["shape"] == [kv_heads, len(ids), head_dim], (i, part, t)
    with safe_open(path, framework="numpy") as f:
        tokens = f.get_tensor("tokens")
        assert tokens.tolist() == list(ids), "tokens differ"
        logits = f.get_tensor("logits")
        assert logits.shape == (info["vocab_size"],), logits.shape
    return {"safetensors_checked": True, "tensors": len(want)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--contexts", default="1024,4096,8192")
    parser.add_argument("--kv", default="bf16,fp8")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default="/tmp")
    parser.add_argument("--out", default="-")
    parser.add_argument("--backend", default="cuda", help="cpu: a check of this script, not a measurement")
    args = parser.parse_args()
    contexts = [int(c) for c in args.contexts.split(",")]
    model = reset.Model(args.model, backend=args.backend)
    info = model.info()
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    rng = random.Random(35)
    path = os.path.join(args.dir, "sequence_file_bench.safetensors")
    for kv in args.kv.split(","):
        session = model.session(max_context=max(contexts) + 1, sequences=2, kv_cache=kv)
        session.set_policy("greedy")
        for n in contexts:
            ids = [rng.randrange(info["vocab_size"]) for _ in range(n)]
            session.reset()
            session.prefill(ids[:1])
            session.truncate_sequence(1, 0)
            session.prefill_sequence(0, ids[1:])
            saves, loads, prefills, memory_saves, memory_loads, reads = [], [], [], [], [], []
            image = None
            for i in range(args.repeats + 1):
                t_save = timed(lambda: session.save_sequence(0, path))
                session.truncate_sequence(1, 0)
                t_load = timed(lambda: session.load_sequence(1, path))
                session.truncate_sequence(1, 0)
                t_prefill = timed(lambda: session.prefill_sequence(1, ids))
                session.truncate_sequence(1, 0)
                if image is None:  # the buffer allocated once, outside the clock (Session.save_sequence_bytes
                    image, fill = memory_buffer(session)  # allocates and zeroes its own on every call)
                t_memory_save = timed(fill)
                session.truncate_sequence(1, 0)
                t_memory_load = timed(lambda: session.load_sequence_bytes(1, image))
                t_read = timed(lambda: open(path, "rb").read())
                session.truncate_sequence(1, 0)
                session.load_sequence(1, path)  # the state the checks below read
                if i:
                    saves.append(t_save)
                    loads.append(t_load)
                    prefills.append(t_prefill)
                    memory_saves.append(t_memory_save)
                    memory_loads.append(t_memory_load)
                    reads.append(t_read)
            with open(path, "rb") as f:
                same_bytes = bytes(image) == f.read()
            same_tokens = session.tokens(1) == session.tokens(0)
            z0, z1 = session.logits(0), session.logits(1)
            same_logits = array.array("f", z0).tobytes() == array.array("f", z1).tobytes()
            size = os.path.getsize(path)
            checked = check_with_safetensors(path, info, ids, kv)
            save, load, prefill, memory_save, memory_load, read = (
                statistics.median(x) for x in (saves, loads, prefills, memory_saves, memory_loads, reads))
            record = {
                "bench": "sequence_file", "device": device_name(), "library": reset.VERSION,
                "backend": args.backend, "model": os.path.basename(os.path.normpath(args.model)),
                "kv_cache": kv, "tokens": n, "file_bytes": size, "repeats": args.repeats,
                "save_ms": round(save * 1e3, 3), "load_ms": round(load * 1e3, 3),
                "prefill_ms": round(prefill * 1e3, 3),
                "save_gb_per_s": round(size / save / 1e9, 2), "load_gb_per_s": round(size / load / 1e9, 2),
                "prefill_over_load": round(prefill / load, 1),
                "save_memory_ms": round(memory_save * 1e3, 3), "load_memory_ms": round(memory_load * 1e3, 3),
                "read_ms": round(read * 1e3, 3),
                "save_memory_gb_per_s": round(size / memory_save / 1e9, 2),
                "load_memory_gb_per_s": round(size / memory_load / 1e9, 2),
                "same_tokens": same_tokens, "same_logits_bits": same_logits, "memory_is_file": same_bytes, **checked,
            }
            print(json.dumps(record), file=out, flush=True)
            os.remove(path)
            if not (same_tokens and same_logits and same_bytes):
                print("sequence_file_bench: a loaded sequence differs from its source, or memory from the file",
                      file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
