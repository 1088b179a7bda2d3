#!/usr/bin/env bash
# Sets up, builds and runs every test (GPU tests skip with a message when there is no device).
#   tools/run_tests.sh [--cpu-only]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build
[ "${1:-}" = "--cpu-only" ] && build_dir=build-cpu
tools/setup.sh "$@"
cd "$build_dir"
ctest -j"$(nproc 2>/dev/null || echo 2)" --output-on-failure --timeout 900
