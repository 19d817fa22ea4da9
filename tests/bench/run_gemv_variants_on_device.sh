#!/usr/bin/env bash
# run_gemv_variants_on_device.sh — on the GPU machine, run the benchmarks that
# build_gemv_variants.sh made, one after the other in ROUNDS rounds (so a
# drift of the machine shows as a spread, not as a difference), on the shapes
# whose name contains ONLY, NVFP4 only.  Logs in $OUT/gemv_<name>_r<round>.log;
# a table of W4A16 µs per shape and M, one column per variant and round, last.
#   tests/bench/run_gemv_variants_on_device.sh BIN_DIR ONLY ROUNDS
set -uo pipefail
bin=$1
only=$2
rounds=${3:-2}
out=${OUT:-$PWD/build-device/out}
mkdir -p "$out"
[[ -f build-bundle/env.sh ]] && source build-bundle/env.sh  # cuBLAS of the machine
names=()
for b in "$bin"/gemv_bench_*; do names+=("${b##*/gemv_bench_}"); done
for ((r = 1; r <= rounds; ++r)); do
    for n in "${names[@]}"; do
        "$bin/gemv_bench_$n" --only "$only" --nvfp4-only > "$out/gemv_${n}_r$r.log" 2>&1 || echo "variant $n failed"
    done
done
python3 - "$out" "$rounds" "${names[@]}" <<'PY'
import re, sys
out, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
table, cols = {}, []
for n in names:
    for r in range(1, rounds + 1):
        col = f"{n} r{r}"
        cols.append(col)
        for line in open(f"{out}/gemv_{n}_r{r}.log"):
            m = re.match(r"(.+?)\s+M=(\d)\s+W4A16\s+([\d.]+) us", line)
            if m:
                table.setdefault((m.group(1).strip(), int(m.group(2))), {})[col] = float(m.group(3))
print("| shape | M | " + " | ".join(cols) + " |")
print("|---|---|" + "---|" * len(cols))
for (shape, m), row in table.items():
    print(f"| {shape} | {m} | " + " | ".join(f"{row.get(c, float('nan')):.2f}" for c in cols) + " |")
PY
