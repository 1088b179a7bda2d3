#!/usr/bin/env bash
# The reliability steps of CI (issue 14; docs/reliability.md): the whole test suite under ASan +
# UBSan (tools/run/run_sanitizers.sh, CPU backend), then each libFuzzer harness for a short bounded
# time (tools/run/run_fuzzers.sh; SAP_FUZZ_SECONDS per target, default 20: CI time).
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
tools/run/run_sanitizers.sh
mid=$(date +%s)
tools/run/run_fuzzers.sh --time "${SAP_FUZZ_SECONDS:-20}"
echo "reliability: sanitizers $((mid - start)) s, fuzzers $(($(date +%s) - mid)) s"
