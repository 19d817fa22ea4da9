#!/usr/bin/env bash
# Python binding test: tests/python/test_binding_python.py against BUILD_DIR/libreset.so.
# Usage: python.sh BUILD_DIR SOURCE_DIR   (RESET_BINDING_IDS from ctest)
set -euo pipefail
build=$1 source=$2
if ! python3 -c "import pytest" 2>/dev/null; then
  echo "SKIPPED: python3 with pytest not found (scripts/setup.sh installs it)"; exit 77
fi
export RESET_LIBRARY=$build/libreset.so RESET_SOURCE_DIR=$source PYTHONPATH=$source/bindings/python
python3 -m pytest -q -p no:cacheprovider "$source/tests/python/test_binding_python.py"
python3 "$source/bindings/python/sample.py" "$source/tests/fixtures/models/qwen3-tied" >/dev/null
