#!/usr/bin/env bash
# The reliability steps of CI (issue 14; docs/reliability.md): the test suite under ASan +
# UBSan (tools/run/run_sanitizers.sh, CPU backend), then each libFuzzer harness for a short bounded
# time (tools/run/run_fuzzers.sh; SAP_FUZZ_SECONDS per target, default 15: CI time).
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
# Every test but the emulated teams on sphere_pile (nv 384: 90 s of the sanitized suite's CPU), the
# humanoid and the G1 (64 s; the same stages as the smaller scenes, whose emulated teams run here):
# those run in the normal suite, and the humanoid's and the G1's under TSan too. (A parameterised
# test's name ends in "  # GetParam() = ...": the scene's name is followed by a space.)
tools/run/run_sanitizers.sh -E 'EmulatedScene\..*/(sphere_pile|humanoid|g1)( |$)'
mid=$(date +%s)
tools/run/run_fuzzers.sh --time "${SAP_FUZZ_SECONDS:-15}"
echo "reliability: sanitizers $((mid - start)) s, fuzzers $(($(date +%s) - mid)) s"
