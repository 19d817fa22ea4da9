#!/usr/bin/env bash
# Java binding test: build bindings/java (swig, cc, javac: bindings/java/build.sh) against
# BUILD_DIR/libreset.so, run its JUnit 5 tests with the console launcher of Debian's junit5,
# then the sample.
# Usage: java.sh BUILD_DIR SOURCE_DIR   (RESET_BINDING_IDS from ctest)
set -euo pipefail
build=$(cd "$1" && pwd) source=$(cd "$2" && pwd)
junit=/usr/share/java/junit-platform-console-standalone.jar
for tool in swig javac java jar cc; do
  if ! command -v $tool >/dev/null; then
    echo "SKIPPED: $tool not found (scripts/setup.sh installs swig, default-jdk and junit5)"; exit 77
  fi
done
if [ ! -f $junit ]; then echo "SKIPPED: no $junit (scripts/setup.sh installs junit5)"; exit 77; fi

# The tool-calling cases of the chat reference, in a form the test reads without a JSON library (a folder
# of its own: the other binding's driver may be rewriting its folder at the same time under ctest -j).
export RESET_TOOL_CASES=$RESET_BINDING_IDS/tool-cases-java
python3 "$source/tests/bindings/tool_cases.py" "$source" "$RESET_TOOL_CASES"
out=$build/java
"$source/bindings/java/build.sh" "$source/include" "$build" "$out"
rm -rf "$out/test-classes" "$out/sample-classes"
javac --release 17 -Xlint:all -Werror -cp "$out/libreset.jar:$junit" -d "$out/test-classes" \
      "$source"/bindings/java/src/test/java/dev/libreset/*.java
javac --release 17 -Xlint:all -Werror -cp "$out/libreset.jar" -d "$out/sample-classes" \
      "$source"/bindings/java/src/sample/java/dev/libreset/sample/*.java

# libreset is found on java.library.path here.  The heap is fixed and pre-touched so that the
# leak test's RSS measures native memory only.
export RESET_SOURCE_DIR=$source
java -Xms64m -Xmx64m -XX:+AlwaysPreTouch -Djava.library.path="$out:$build" \
     -jar $junit --class-path "$out/libreset.jar:$out/test-classes" --select-class dev.libreset.ResetTest \
     --disable-banner --details=tree --fail-if-no-tests

# The sample finds libreset through the system property instead.
sample() {
  java -cp "$out/libreset.jar:$out/sample-classes" -Dreset.library="$build/libreset.so" \
       -Djava.library.path="$out" dev.libreset.sample.Generate "$@"
}
# shellcheck source=tests/bindings/sample_checks.sh
source "$source/tests/bindings/sample_checks.sh"
chat=$source/tests/fixtures/chat-model
plain=$(sample "$chat")
# The text, then a line saying how the sequence ended.
end=$(tail -n 1 <<<"$plain") text=${plain%$'\n'*}
case $end in "end: limit" | "end: end of generation") ;; *) fail "the sample ends with '$end'" ;; esac
if [ -z "${text//[[:space:]]/}" ]; then echo "FAIL: the sample generated no text"; exit 1; fi
echo "sample: ${text:0:60}..."

# The sample's stop-condition options (Session.setStop), against its own plain runs: the seeded
# sampler draws the same tokens with them, so a run must print the plain run's beginning and end.
fixture=$source/tests/fixtures/models/qwen3-tied   # no tokenizer: one line per step
step_re='^ *-?[0-9]+ +[-0-9.]+ T=[0-9.]+$'
plain=$(sample "$fixture")
read_plain_run "$plain" "$step_re" '{print}'  # whole step lines: id, entropy and temperature

# -max-tokens 5: the plain run's first 5 steps, then end: length.
check_max_tokens "$(sample -max-tokens 5 "$fixture")"

# -stop-id of the plain run's 3rd token: the run ends where that token first comes (step 3 or before).
id3=$(sed -n 3p <<<"$plain_ids")
check_stop_id "$(sample -max-tokens=5 -stop-id "$id3" "$fixture")" "$id3"

# -stop on the chat model: a piece of its plain text as the second stop string ends the text just
# before the piece's first occurrence (end: stop (string 1)).
stop=${text:8:6}
[ -n "${stop//[[:space:]]/}" ] || fail "the chat model's plain text is too short for the -stop check"
got=$(sample -stop "no such text here" -stop "$stop" "$chat")
[ "$(tail -n 1 <<<"$got")" = "end: stop (string 1)" ] || fail "-stop '$stop' ends with '$(tail -n 1 <<<"$got")'"
[ "${got%$'\n'*}" = "${text%%"$stop"*}" ] || fail "-stop '$stop' printed '${got%$'\n'*}'"

# User errors: a message and a non-zero exit, never a stack trace.
for bad in "-max-tokens x" "-max-tokens -1" "-stop-id y" "-stop-id -2" "-bogus 1" "-max-tokens"; do
  # shellcheck disable=SC2086  # the option and its value are two words
  if err=$(sample $bad "$fixture" 2>&1); then fail "Generate $bad exited 0"; fi
  grep -q -- "${bad%% *}" <<<"$err" || fail "Generate $bad: no message naming the option: $err"
  if grep -qE 'Exception|^\s+at ' <<<"$err"; then fail "Generate $bad: a stack trace: $err"; fi
done
# Conditions the library refuses: its message, no stack trace.
for bad in "-stop-id 99999999 $fixture" "-stop x $fixture"; do
  # shellcheck disable=SC2086
  if err=$(sample $bad 2>&1); then fail "Generate $bad exited 0"; fi
  grep -q RESET_ERR <<<"$err" || fail "Generate $bad: no library message: $err"
  if grep -qE 'Exception|^\s+at ' <<<"$err"; then fail "Generate $bad: a stack trace: $err"; fi
done
echo "sample options: ok"
