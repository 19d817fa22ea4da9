#!/usr/bin/env bash
# Go binding test: SWIG generates bindings/go/internal/native from reset.h (go generate), then
# go test of bindings/go/reset (cgo) against BUILD_DIR/libreset.so, then the sample.
# Usage: go.sh BUILD_DIR SOURCE_DIR   (RESET_BINDING_IDS from ctest)
set -euo pipefail
build=$1 source=$2
if ! command -v go >/dev/null; then echo "SKIPPED: go not found (scripts/setup.sh installs golang-go)"; exit 77; fi
if ! command -v swig >/dev/null; then echo "SKIPPED: swig not found (scripts/setup.sh installs swig)"; exit 77; fi
export RESET_SOURCE_DIR=$source RESET_INCLUDE_DIR=$source/include
export CGO_ENABLED=1 CGO_CFLAGS=-I$source/include CGO_LDFLAGS=-L$build
export LD_LIBRARY_PATH=$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Offline, with caches in the build folder: nothing is fetched, nothing written to $HOME.
# cgo's build cache does not hash headers found through CGO_CFLAGS, so after reset.h changes a cached
# wrapper keeps the old struct layouts (seen when 0.4 reordered reset_step): one cache per header.
header_hash=$(sha256sum "$source/include/reset.h" | cut -c1-16)
export GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$build/go-cache/$header_hash GOPATH=$build/go-path
cd "$source/bindings/go"
go generate ./internal/native
# The generated package is vetted without the unsafeptr check: SWIG's own
# string copy turns a C address held in a uintptr into a pointer, on purpose.
go vet ./reset ./cmd/...
go vet -unsafeptr=false ./internal/native
go test -count=1 ./reset
go run ./cmd/generate "$source/tests/fixtures/models/qwen3-tied" >/dev/null
