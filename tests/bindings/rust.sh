#!/usr/bin/env bash
# Rust binding test: builds bindings/rust offline (reset-sys runs the bindgen
# command) against BUILD_DIR/libreset.so, runs its tests and the sample.
# Usage: rust.sh BUILD_DIR SOURCE_DIR   (RESET_BINDING_IDS from ctest)
set -euo pipefail
build=$1 source=$2
for tool in cargo bindgen; do
  if ! command -v $tool >/dev/null; then echo "SKIPPED: $tool not found (scripts/setup.sh installs it)"; exit 77; fi
done
export RESET_LIB_DIR=$build RESET_INCLUDE_DIR=$source/include RESET_SOURCE_DIR=$source
# The tool-calling cases of the chat reference, in a form the test reads without a JSON crate (a folder
# of its own: the other binding's driver may be rewriting its folder at the same time under ctest -j).
export RESET_TOOL_CASES=$RESET_BINDING_IDS/tool-cases-rust
python3 "$source/tests/bindings/tool_cases.py" "$source" "$RESET_TOOL_CASES"
export CARGO_TARGET_DIR=$build/rust-target LD_LIBRARY_PATH=$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Build a copy in the build tree: cargo writes Cargo.lock beside the manifest,
# and a lock file from one cargo version can be unreadable by another.
rm -rf "$build/rust-src" && mkdir -p "$build/rust-src"
cp -r "$source/bindings/rust/." "$build/rust-src/"
rm -f "$build/rust-src/Cargo.lock"
cd "$build/rust-src"
# Tests run one at a time: the RSS check must not see another test's allocations.
cargo test --offline --quiet -- --test-threads=1
cargo run --offline --quiet --example generate -- "$source/tests/fixtures/models/qwen3-tied" >/dev/null
