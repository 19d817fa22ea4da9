#!/usr/bin/env bash
# Install what libreset needs to build and test on Debian/Ubuntu (README lists
# what each package is for).  Safe to run again.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
packages=(build-essential cmake pkg-config python3 python3-pip valgrind swig golang-go bindgen cargo default-jdk junit5
          nlohmann-json3-dev doctest-dev libpcre2-dev libsentencepiece-dev libicu-dev libedit-dev
          libcpp-httplib-dev)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi
# Python: numpy for the binding's arrays; pytest; the reference tokenizers and
# template renderer the differential tests compare against.
python3 -m pip install -q --disable-pip-version-check -r "$(dirname "$0")/../tests/python/requirements.txt"
