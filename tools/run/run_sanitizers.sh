#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer (gcc, CPU backend,
# -DSAP_WITH_CUDA=OFF -DSAP_SANITIZE=address,undefined) in build-asan. Any report fails the run:
# UBSan is built with -fno-sanitize-recover, ASan stops at the first error, leaks included.
#   tools/run/run_sanitizers.sh [ctest arguments, e.g. -R Scene]
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/setup.sh --no-build  # packages only
build=build-asan
if [ ! -f "$build/CMakeCache.txt" ] || [ CMakeLists.txt -nt "$build/CMakeCache.txt" ]; then
  # -O1 -g1: the usual sanitizer trade-off (readable stacks: line tables name function, file and
  # line; faster to compile than -O2 or full -g).
  # The library and the test suite; not bench/ and examples/ (tools and a snippet around the library, whose
  # tests, BenchCli, AllScenes and Readme, run unsanitized in the default and CPU-only configurations).
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSAP_WITH_CUDA=OFF \
    -DSAP_SANITIZE=address,undefined -DSAP_BUILD_BENCH=OFF -DSAP_BUILD_EXAMPLES=OFF >/dev/null
fi
if ! cmake --build "$build" -j2 >"$build/build.log" 2>&1; then
  grep -E "error|No space" "$build/build.log" | head -40 >&2
  echo "run_sanitizers: build failed (full log: $build/build.log)" >&2
  exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
ctest -j2 --output-on-failure --timeout 1800 "$@"
