#!/usr/bin/env bash
# Session 38, run 8 (H100): the `reset` command's tests with the CUDA build's `reset` (AUTO picks
# CUDA wherever the kernels serve the fixture): tests/cli/test_commands.py (this session: the note
# when a loaded state holds another version of its conversation) and tests/cli/test_repl.py (the
# recap and the line editor's history of a loaded conversation, at a terminal).
# Carry: build-bundle.tar.xz (BUNDLE_PROGRAMS="reset"), COMMIT.
source tests/bench/results/start_device_run.sh
R=$PWD/build-bundle/bin/reset
timeout 400 python3 tests/cli/test_commands.py "$R" "$PWD" > "$OUT/cli_s38_run8.txt" 2>&1
echo "cli rc $? at $SECONDS s" | tee -a "$OUT/cli_s38_run8.txt"
timeout 120 python3 tests/cli/test_repl.py "$R" "$PWD/tests/fixtures/chat-model" >> "$OUT/cli_s38_run8.txt" 2>&1
echo "repl rc $? at $SECONDS s" | tee -a "$OUT/cli_s38_run8.txt"
grep -cE "^ok" "$OUT/cli_s38_run8.txt"; grep -E "^FAIL|all passed|on cuda|backend" "$OUT/cli_s38_run8.txt" | head
tail -3 "$OUT/cli_s38_run8.txt"
echo "done at $SECONDS s"
