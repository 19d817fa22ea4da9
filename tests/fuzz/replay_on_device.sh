#!/usr/bin/env bash
# replay_on_device.sh [DIR...] — on the GPU machine, from the repository root,
# with build-bundle/ carried over (BUNDLE_PROGRAMS naming fuzz_replay_<target>,
# scripts/make_device_bundle.sh): replay a target's inputs (FUZZ_TARGET:
# model_load, the default, session or sequence_file; default inputs: the committed corpus;
# a corpus fuzzing grew, tests/fuzz/run_fuzzers.sh, may be carried too) with
# the CUDA backend (RESET_FUZZ_BACKEND=cuda), going on past an input that
# aborts and naming every such one; then the committed corpus under
# compute-sanitizer memcheck.  Logs under $OUT.  Exit 1 on any finding.
set -uo pipefail
out=${OUT:-$PWD/build-device/out}
mkdir -p "$out"
source build-bundle/env.sh
target=${FUZZ_TARGET:-model_load}
replay=build-bundle/bin/fuzz_replay_$target
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("tests/fuzz/corpus/$target")
log=$out/fuzz_replay_cuda_$target.log
: > "$log"
status=0
skip=0
while :; do
    RESET_FUZZ_BACKEND=cuda RESET_FUZZ_SKIP=$skip "$replay" "${dirs[@]}" >> "$log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && break
    status=1
    last=$(grep -o '^input [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    echo "finding (exit $rc) at input $last" | tee -a "$log"
    [ -n "$last" ] || break
    skip=$((last + 1))
done
grep -c '^input ' "$log" | sed 's/^/inputs run: /'
grep -E 'FUZZ FINDING|ERROR|finding' "$log" | head -n 40
echo "== compute-sanitizer memcheck over the committed corpus"
RESET_FUZZ_BACKEND=cuda compute-sanitizer --tool memcheck --error-exitcode 3 --leak-check no \
    "$replay" "tests/fuzz/corpus/$target" > "$out/fuzz_replay_cuda_memcheck_$target.log" 2>&1 || status=1
tail -n 3 "$out/fuzz_replay_cuda_memcheck_$target.log"
exit $status
