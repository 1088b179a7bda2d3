#!/usr/bin/env bash
# Installs missing Debian packages (idempotent, quiet when nothing is missing), then configures
# and builds the project.
#   tools/setup.sh [--cpu-only] [--build-dir DIR] [--type Release|Debug] [--no-build] [--target T]...
# --no-build: install the packages only (scripts that configure a build of their own).
# --target T: build target T (repeatable) instead of everything (CI's second configuration).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
cuda=auto
type=Release
build=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-only) cuda=OFF; build_dir=${build_dir/#build/build-cpu} ;;
    --build-dir) build_dir=$2; shift ;;
    --type) type=$2; shift ;;
    --no-build) build=0 ;;
    --target) targets+=("$2"); shift ;;
    *) echo "setup.sh: unknown option '$1' (expected --cpu-only, --build-dir DIR, --type T, --no-build, --target T)" >&2; exit 2 ;;
  esac
  shift
done

# clang and libclang-rt-dev (libFuzzer) build the fuzzers of tools/run/run_fuzzers.sh (CI).
packages=(build-essential cmake ccache libeigen3-dev nlohmann-json3-dev libgtest-dev libtinyxml2-dev
          libmujoco-dev python3-numpy python3-matplotlib clang libclang-rt-dev libdlpack-dev
          libassimp-dev libqhull-dev libpng-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # libmujoco-dev is optional (MuJoCo oracle tests); do not fail when a mirror lacks it.
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null ||
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq $(printf '%s\n' "${missing[@]}" | grep -v mujoco) >/dev/null
fi

[ "$build" = 1 ] || exit 0

cmake_args=(-S . -B "$build_dir" -DCMAKE_BUILD_TYPE="$type")
[ "$cuda" = OFF ] && cmake_args+=(-DSAP_WITH_CUDA=OFF)
if [ ! -f "$build_dir/CMakeCache.txt" ] || [ CMakeLists.txt -nt "$build_dir/CMakeCache.txt" ]; then
  cmake "${cmake_args[@]}" >/dev/null
fi
jobs=$(nproc 2>/dev/null || echo 2)
log="$build_dir/build.log"
# A build takes 0.2 to 0.9 GB (the sanitizer build the most) and ccache about as much again; a full
# disk fails in the linker with only "ld returned 1", so say how much room there is before and
# after a failure.
free_mb=$(df -Pm "$build_dir" | awk 'NR==2 {print $4}')
if [ "${free_mb:-0}" -lt 2000 ]; then
  echo "setup: warning: only ${free_mb} MB free on the disk of $build_dir; a build takes up to 900 MB, ccache as much again" >&2
fi
if ! cmake --build "$build_dir" -j"$jobs" ${targets[@]:+--target "${targets[@]}"} >"$log" 2>&1; then
  grep -E "error|Error|No space" "$log" | head -40 >&2
  echo "setup: build failed in $build_dir (full log: $log; $(df -Pm "$build_dir" | awk 'NR==2 {print $4}') MB free on its disk)" >&2
  exit 1
fi
grep -E "warning:" "$log" | head -20 || true
