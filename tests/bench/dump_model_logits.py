#!/usr/bin/env python3
"""dump_model_logits.py -- a model's logits as the decode benchmark sees them, for the sampler's timing.

Prefills `reset bench decode`'s synthetic 1k prompt, takes 6 greedy steps, saves the first 4 rows of
logits (float32, numpy .npy) and prints their spread and, for T = 1 and top-p 0.95, the value bin
(256 linear bins over [min, max], as kernels/sampling.cu's value level) where the nucleus ends and how
many tokens it holds.  On the GPU machine, with build-bundle/ unpacked:

    RESET_LIBRARY=$PWD/build-bundle/lib/libreset.so.0 PYTHONPATH=bindings/python \
        python3 tests/bench/dump_model_logits.py MODEL_DIR OUT.npy
    python3 -c "import numpy; numpy.load('OUT.npy').tofile('OUT.f32')"
    RESET_GPU_TEST_LOGITS=OUT.f32 RESET_GPU_TEST_TIMING_ONLY=1 build-bundle/bin/gpu_test_sampling

(session 11: the random Qwen3-8B checkpoint of make_random_checkpoint.py, whose logits are N(0, 0.78)).
"""
import sys
import numpy as np
import reset

path, out = sys.argv[1], sys.argv[2]
with reset.Model(path, backend="cuda") as model:
    vocab = model.info()["vocab_size"]
    with model.session(max_context=1200) as s:
        prompt = [(i * 7919 + 17) % vocab for i in range(1024)]
        s.set_policy(kind="greedy")
        s.prefill(prompt)
        rows = []
        for t in range(6):
            rows.append(s.logits())
            s.step()
rows = np.stack(rows)
np.save(out, rows[:4])
for z in rows:
    z = z.astype(np.float64)
    w = np.exp(z - z.max())
    order = np.argsort(-z, kind="stable")
    cum = np.cumsum(w[order])
    cut = np.searchsorted(cum, 0.95 * w.sum())
    span = z.max() - z.min()
    bins = np.minimum(((z - z.min()) * (256 / span)).astype(np.int64), 255)
    cb = bins[order[cut]]
    print(f"mean {z.mean():+.3f} sd {z.std():.3f} min {z.min():+.3f} max {z.max():+.3f} nucleus {cut + 1} "
          f"cut z {z[order[cut]]:+.3f} bin {cb} members {np.sum(bins == cb)} kurtosis "
          f"{(((z - z.mean()) / z.std()) ** 4).mean():.2f}")
