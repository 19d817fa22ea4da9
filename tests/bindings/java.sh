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
text=$(java -cp "$out/libreset.jar:$out/sample-classes" -Dreset.library="$build/libreset.so" \
            -Djava.library.path="$out" dev.libreset.sample.Generate "$source/tests/fixtures/chat-model")
if [ -z "${text//[[:space:]]/}" ]; then echo "FAIL: the sample generated no text"; exit 1; fi
echo "sample: ${text:0:60}..."
