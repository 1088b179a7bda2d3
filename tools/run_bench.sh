#!/usr/bin/env bash
# Sets up, builds and runs the main job: sap_bench on the default scene with the best backend
# available (CUDA when a device is present, else all CPU threads). Extra arguments go to sap_bench.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
exec build/sap_bench scenes/box_stack_5.json --backend auto "$@"
