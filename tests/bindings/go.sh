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

# The sample's stop-condition flags (Session.SetStop), against its own plain run: greedy decoding
# repeats itself, so a run with stop conditions must print the plain run's first steps and then end.
gen=$build/go-bin/generate
go build -o "$gen" ./cmd/generate
# shellcheck source=tests/bindings/sample_checks.sh
source "$source/tests/bindings/sample_checks.sh"
fixture=$source/tests/fixtures/models/qwen3-tied
step_re='^ *-?[0-9]+ +[-+0-9.eEInfNa]+ ".*"$'
plain=$("$gen" "$fixture")
# Greedy steps are compared by their ids (the text is printed %q-escaped, the -stop check below
# parses it on its own).
# shellcheck disable=SC2016  # an awk program, not a shell expansion
read_plain_run "$plain" "$step_re" '{print $1}'

# -max-tokens 5: the plain run's first 5 steps, then end: length.
check_max_tokens "$("$gen" -max-tokens 5 "$fixture")"

# -stop-id of the plain run's 3rd token: the run ends where that token first comes (step 3 or before).
id3=$(sed -n 3p <<<"$plain_ids")
check_stop_id "$("$gen" -stop-id "$id3" "$fixture")" "$id3"
# With a -max-tokens above that step, the stop id still comes first.
out=$("$gen" -max-tokens 5 -stop-id "$id3" "$fixture")
[ "$(tail -n 1 <<<"$out")" = "end: stop (id $id3)" ] \
  || fail "-max-tokens 5 -stop-id $id3 ends with '$(tail -n 1 <<<"$out")'"

# -stop on the chat model (it has a tokenizer): the text of its plain run's 3rd step as the second
# stop string ends the run (end: stop (string 1)) at the first step whose text completes it.
chat=$source/tests/fixtures/chat-model
plain=$("$gen" "$chat")
texts=$(grep -E "$step_re" <<<"$plain" | sed -E 's/^ *-?[0-9]+ +[^ ]+ "(.*)"$/\1/')
stop=$(sed -n 3p <<<"$texts")
[ -n "$stop" ] || fail "chat plain run: the 3rd step has no text"
[[ $stop != *\\* ]] || fail "chat plain run: the 3rd step's text '$stop' is escaped (%q)"
k=0 seen=""
while IFS= read -r t; do
  k=$((k + 1)) seen+=$t
  [[ $seen == *"$stop"* ]] && break
done <<<"$texts"
out=$("$gen" -stop "no such text here" -stop "$stop" "$chat")
[ "$(grep -E "$step_re" <<<"$out" | awk '{print $1}')" = "$(grep -E "$step_re" <<<"$plain" | head -n "$k" | awk '{print $1}')" ] \
  || fail "-stop '$stop' did not end at step $k: $out"
[ "$(tail -n 1 <<<"$out")" = "end: stop (string 1)" ] || fail "-stop '$stop' ends with '$(tail -n 1 <<<"$out")'"

# Bad values: a message and a non-zero exit, before the model is read.
for bad in "-max-tokens x" "-max-tokens -1" "-stop-id y" "-stop-id -2"; do
  # shellcheck disable=SC2086  # the option and its value are two words
  if err=$("$gen" $bad "$fixture" 2>&1); then fail "generate $bad exited 0"; fi
  grep -q -- "${bad%% *}" <<<"$err" || fail "generate $bad: no message naming the flag: $err"
done
echo "sample flags: ok"
