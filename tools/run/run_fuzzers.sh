#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan, CPU-only) in build-fuzz and runs each
# one after the other, starting from its seed corpus fuzz/corpus/<target> (copied: the repository
# corpus is not modified) with the target's dictionary, in one process (the equivalent of -jobs=1).
#   tools/run/run_fuzzers.sh [--time SEC] [--runs N] [--target T] [--build-only] [--coverage]
# --coverage: no fuzzing; replays build-fuzz/corpus/<target> (the corpus a previous run grew)
# through a source-coverage build (build-fuzz-cov) and prints llvm-cov's line coverage of the
# loaders.
# Defaults: 60 s per target (CI). Crashes, timeouts and out-of-memory inputs are written to
# build-fuzz/artifacts/<target>/; the script fails if there is any. Keep a fixed crasher in
# fuzz/regressions/<target>/ so that the test suite replays it (test_loader_robustness).
set -euo pipefail
cd "$(dirname "$0")/../.."

time_s=60
runs=-1
targets=(scene_json mjcf urdf)
build_only=0
coverage=0
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_s=$2; shift ;;
    --runs) runs=$2; shift ;;
    --target) targets=("$2"); shift ;;
    --build-only) build_only=1 ;;
    --coverage) coverage=1 ;;
    *) echo "run_fuzzers.sh: unknown option '$1' (expected --time SEC, --runs N, --target T, --build-only, --coverage)" >&2; exit 2 ;;
  esac
  shift
done

# clang and the libFuzzer runtime (Debian: clang, libclang-rt-dev) are in setup.sh's list.
tools/setup.sh --no-build

build=build-fuzz
cov_flags=()
if [ "$coverage" = 1 ]; then
  build=build-fuzz-cov
  cov_flags=(-DCMAKE_CXX_FLAGS="-fprofile-instr-generate -fcoverage-mapping"
             -DCMAKE_EXE_LINKER_FLAGS="-fprofile-instr-generate")
fi
if [ ! -f "$build/CMakeCache.txt" ] || [ CMakeLists.txt -nt "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSAP_WITH_CUDA=OFF \
    -DSAP_BUILD_FUZZERS=ON -DSAP_BUILD_TESTS=OFF -DSAP_BUILD_BENCH=OFF -DSAP_BUILD_EXAMPLES=OFF "${cov_flags[@]}" >/dev/null
fi
if ! cmake --build "$build" -j2 >"$build/build.log" 2>&1; then
  grep -E "error" "$build/build.log" | head -40 >&2
  echo "run_fuzzers: build failed (full log: $build/build.log)" >&2
  exit 1
fi
[ "$build_only" = 1 ] && exit 0

if [ "$coverage" = 1 ]; then
  for t in "${targets[@]}"; do
    rm -f "$build/$t.profraw"
    LLVM_PROFILE_FILE="$build/$t.profraw" "$build/fuzz_$t" -runs=0 build-fuzz/corpus/"$t" fuzz/corpus/"$t" \
      fuzz/regressions/"$t" >"$build/cov_$t.log" 2>&1
    llvm-profdata merge -sparse "$build/$t.profraw" -o "$build/$t.profdata"
    echo "coverage: $t (corpus build-fuzz/corpus/$t)"
    llvm-cov report "$build/fuzz_$t" -instr-profile="$build/$t.profdata" src/scene/scene_json.cpp src/scene/json_reader.cpp \
      src/scene/scene_to_model.cpp src/scene/scene_state_reader.cpp src/scene/scene_runtime.cpp src/import/mjcf_document.cpp src/import/mjcf_bodies.cpp \
      src/import/mjcf_actuation.cpp src/import/urdf.cpp \
      src/import/import_common.cpp src/import/rotation.cpp src/model/model_builder.cpp 2>/dev/null |
      awk 'NR > 2 && !/^-/ { printf "  %-18s lines %5s, %4s missed: %7s covered; branches %7s\n", $1, $8, $9, $10, $13 }'
  done
  exit 0
fi

status=0
for t in "${targets[@]}"; do
  work="$build/corpus/$t"
  art="$build/artifacts/$t"
  mkdir -p "$work" "$art"
  cp -n fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
  # -timeout: a single input taking 10 s is a hang; -rss_limit_mb / -malloc_limit_mb: an input
  # needing 2 GB is unbounded allocation (inputs are at most -max_len bytes).
  log="$build/fuzz_$t.log"
  echo "fuzz: $t for ${time_s} s (runs limit $runs), log $log"
  # The regression inputs are a second, read-only corpus: they run first, every time.
  if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 "$build/fuzz_$t" "$work" "fuzz/regressions/$t" -dict="fuzz/$t.dict" \
      -max_total_time="$time_s" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=2048 -max_len=16384 -print_final_stats=1 -artifact_prefix="$art/" >"$log" 2>&1; then
    status=1
    echo "fuzz: $t FAILED; artifacts in $art:" >&2
    ls "$art" >&2
    grep -E "ERROR|error message|runtime error|SUMMARY" "$log" | head -20 >&2
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|cov:" "$log" | tail -3 || true
done
exit $status
