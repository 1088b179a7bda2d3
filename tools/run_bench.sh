#!/usr/bin/env bash
# Sets up, builds and runs the main job: sap_bench on the default scene (box_stack_5: a settling
# stack of five boxes, 20 contacts per world) with the best backend available (CUDA when a device
# is present, else all CPU threads) and prints its summary. Extra arguments go to sap_bench and
# override the defaults below (e.g. --worlds 16384 --steps 500 --json out.json).
# About 15 s on a 2-core CPU after the build (two passes of 1024 worlds x 500 steps).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
worlds=1024
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then worlds=8192; fi
exec build/sap_bench scenes/box_stack_5.json --backend auto --worlds "$worlds" --steps 500 "$@"
