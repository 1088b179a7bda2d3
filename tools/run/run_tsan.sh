#!/usr/bin/env bash
# ThreadSanitizer configuration (CI): the CPU-only library and the emulated-team tests built
# with -fsanitize=thread, run on a few small scenes at several lane counts. Lanes are real
# threads whose only happens-before edges are the team barriers, so a lane reading what
# another wrote without a sync() between is reported. Also checks that an injected race is
# caught (tests/sanitizer/emu_race_demo.cpp). The fp64 retry on emulated teams too (its compact
# solver's unused slots are skipped worlds that every team stage leaves at once).
#   tools/run/run_tsan.sh [--build-dir DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir=build-tsan
[ "${1:-}" = "--build-dir" ] && build_dir=$2
tools/setup.sh --cpu-only --build-dir "$build_dir" --no-build
cmake -S . -B "$build_dir" -DSAP_WITH_CUDA=OFF -DSAP_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build "$build_dir" -j"$jobs" --target test_emulated_team test_emulated_scenes test_collision_pipeline test_fp64_retry emu_race_demo >"$build_dir/build.log" 2>&1 ||
  { tail -40 "$build_dir/build.log" >&2; echo "run_tsan: build failed" >&2; exit 1; }
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# Two worlds per scene, a partial warp and a partial second warp; the one-lane oracle runs in
# the same process. Every scene but sphere_pile (nv 384: minutes under the sanitizer; its
# emulated runs without the sanitizer are in the normal suite).
export SAP_EMU_LANES=3,33
export SAP_EMU_SCENES=pendulum,double_pendulum,free_tumbling_box,multi_joints,pd_arm,sphere_on_ground,box_on_incline,free_cube,box_stack_5,franka_cube,humanoid,g1,panda,constrained_mechanisms
cd "$build_dir"
ctest -j"$jobs" --output-on-failure --timeout 900 -R "EmulatedTeam|EmulatedScene|EmuRaceDemo|CollisionPipeline.EmulatedTeamsKeepThePairOrder|Fp64RetryRuns.*lanes"
