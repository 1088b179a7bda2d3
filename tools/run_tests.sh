#!/usr/bin/env bash
# Sets up, builds and runs every test (GPU tests skip with a message when there is no device).
#   tools/run_tests.sh [--cpu-only]
# The CPU-only configuration also builds the Python module and runs its pytest suite (ctest
# Python.pytest; tools/setup_python.sh makes the environment). SAP_NO_PYTHON=1 leaves it out.
# SAP_CTEST_REGEX=RE runs only the tests whose names match RE (ctest -R; CI's second configuration).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build
[ "${1:-}" = "--cpu-only" ] && build_dir=build-cpu
if [ "$build_dir" = build-cpu ] && [ "${SAP_NO_PYTHON:-0}" != 1 ]; then
  tools/setup.sh --cpu-only --no-build
  python_exe=$(tools/setup_python.sh)
  cmake -S . -B "$build_dir" -DSAP_WITH_CUDA=OFF -DSAP_BUILD_PYTHON=ON -DPython_EXECUTABLE="$python_exe" >/dev/null
fi
tools/setup.sh "$@"
cd "$build_dir"
ctest -j"$(nproc 2>/dev/null || echo 2)" --output-on-failure --timeout 900 ${SAP_CTEST_REGEX:+-R "$SAP_CTEST_REGEX"}
