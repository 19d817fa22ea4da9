#!/usr/bin/env bash
# Session 14, run 2: which part of the claimed pair costs.  Libraries (LD_LIBRARY_PATH first):
#  claimed  this tree (both products' units claimed);
#  static   958b7d8's grid barrier over CTAs, launched without the cooperative attribute
#           (session 13's unsafe "plain" form);
#  static2  this tree with the second product's unit = blockIdx.x (no second claim).
# "this tree" is gemv_pair_claim_variants_s14.patch's "claimed" form; static is 958b7d8 with
# gemv_pair_plain_launch_s13.patch, static2 the session-14 commit with gemv_pair_claim_variants_s14.patch.
# Each library: tests/bench/build_gemv_variant_lib.sh NAME SRCDIR (SRCDIR holding the patched
# kernels/), its .ab/NAME carried as .ab14/NAME.
# MLP benchmark (Qwen3-8B) per library, then the decode step: the pair never (RESET_GEMV_PAIR=0)
# against each library's pair at every row count, batch 1, 2, 4, 8, 2 rounds alternated.
set -x
exec > >(tee "$OUT/run.log") 2>&1
tar xJf build-bundle.tar.xz
source build-bundle/env.sh
for v in static static2; do xz -dk .ab14/$v/libreset.so.0.xz; done
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv
libpath() { [[ $1 == claimed || $1 == never ]] && echo "$LD_LIBRARY_PATH" || echo "$PWD/.ab14/$1:$LD_LIBRARY_PATH"; }
for v in claimed static static2; do
  LD_LIBRARY_PATH=$(libpath $v) timeout 100 build-bundle/bin/nvfp4_gemv_bench --nvfp4-only --only "Qwen3-8B mlp" > "$OUT/bench_$v.txt" 2>&1
  echo "$v: $(grep -E 'M=1 ' "$OUT/bench_$v.txt")"; grep -E "M=[248] " "$OUT/bench_$v.txt"
done
python3 tests/bench/make_random_checkpoint.py qwen3-8b nvfp4 /tmp/ck/qwen3-8b-nvfp4 > /tmp/ck.log 2>&1; echo "checkpoint at $SECONDS s"
for r in 1 2; do
  for v in never claimed static static2; do
    pair=1; [[ $v == never ]] && pair=0
    LD_LIBRARY_PATH=$(libpath $v) RESET_GEMV_PAIR=$pair timeout 90 build-bundle/bin/reset bench decode /tmp/ck/qwen3-8b-nvfp4 --backend cuda --weights auto \
      --prompt-tokens 1024 --sequences 1,2,4,8 --tokens 64 --repeat 2 --json 2>>"$OUT/err.log" | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /"
  done
  echo "round $r at $SECONDS s" >&2
done > "$OUT/pair_ab.jsonl"
python3 - "$OUT/pair_ab.jsonl" <<'PY'
import json, sys, statistics
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l); by.setdefault((d.get("sequences"), d["variant"]), []).append(d["ms_per_step"])
base = {k[0]: statistics.median(v) for k, v in by.items() if k[1] == "never"}
for k, v in sorted(by.items(), key=str):
    m = statistics.median(v)
    print(f"batch {str(k[0]):3s} {k[1]:8s} {' '.join(f'{x:.4f}' for x in v)}  median {m:.4f}  {100 * (m / base[k[0]] - 1):+.1f}%")
PY
echo "done at $SECONDS s"
