#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, with .gpu_bundle carried (tools/run/gpu_bundle.sh):
# the target benchmarks of docs/benchmarks.md ("GPU figures") first, then the CUDA tests,
# compute-sanitizer, a scaling sweep and an Nsight Compute summary of the step's kernels.
# Everything is written under $OUT (the device tool brings back at most 8 files: JSON results are
# packed into one archive). Each part has its own time limit so that one slow part cannot take the
# results of the others with it.
set -uo pipefail
out=${OUT:-/tmp/gpu_out}
mkdir -p "$out/json"
export LD_LIBRARY_PATH="$PWD/.gpu_bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
b=.gpu_bundle
# The tests were compiled with SAP_SOURCE_DIR = the build machine's checkout: point it here.
src=$(cat $b/source_dir)
if [ "$src" != "$PWD" ]; then mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"; fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; cat $b/commit; } | tee "$out/device.txt"
bench() {  # bench NAME SCENE ARGS...: one sap_bench run, JSON under $out/json, summary lines in bench.txt
  local name=$1; shift
  echo "== $name: sap_bench $*" >> "$out/bench.txt"
  timeout 120 "$b/sap_bench" "$@" --backend cuda --json "$out/json/$name.json" 2>&1 |
    grep -E 'world-steps/s|stage|collide|free_motion|contact_setup|solve|integrate|total|Newton|failed|contacts|fp64' >> "$out/bench.txt"
  echo "exit ${PIPESTATUS[0]}" >> "$out/bench.txt"
}
# 1. The targets of issue 12 (8192 worlds).
g1=models/unitree_g1/scene_flat.xml
bench humanoid_8192 scenes/humanoid.json --worlds 8192 --steps 200
bench g1_8192 "$g1" --keyframe home --worlds 8192 --steps 100
bench franka_cube_8192 scenes/franka_cube.json --worlds 8192 --steps 200
bench box_stack_5_8192 scenes/box_stack_5.json --worlds 8192 --steps 200
for p in approx32 approx64 drake; do bench humanoid_${p}_8192 scenes/humanoid.json --worlds 8192 --steps 200 --preset $p; done
# The fp64 retry inside the CUDA graph (the UR5's failed fp32 steps, repeated up to the compact
# solver's capacity, the rest counted as overflow), and what it costs when nothing fails (the
# humanoid without it, against humanoid_8192 with it).
bench ur5_retry_4096 tests/data/ur5_box_floor_rigid.json --worlds 4096 --steps 100
bench humanoid_noretry_8192 scenes/humanoid.json --worlds 8192 --steps 200 --set fp64_retry=false
cat "$out/bench.txt"
# 2. CUDA tests.
for t in test_cuda_parity test_collision_pipeline test_scene_physics test_free_motion test_linear_solver test_fp64_retry; do
  timeout 150 "$b/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|error' | head -40 | tee -a "$out/tests.txt"
  echo "$t exit ${PIPESTATUS[0]}" | tee -a "$out/tests.txt"
done
# The device tool stops a command at 600 s and then brings back only what is already packed: the later,
# optional parts run only while time is left (GPU_RUN_BUDGET_S seconds in all).
budget=${GPU_RUN_BUDGET_S:-500}
time_left() { [ $SECONDS -lt $((budget - $1)) ] || { echo "skipped after ${SECONDS}s: $2" | tee -a "$out/skipped.txt"; false; }; }
# 3. Other scenes, scaling.
time_left 200 "other scenes, scaling" && {
for s in free_cube multi_joints sphere_on_ground sphere_pile pendulum g1_rough_terrain; do bench ${s}_4096 scenes/$s.json --worlds 4096 --steps 200; done
bench humanoid_ls_reference scenes/humanoid.json --worlds 4096 --steps 100 --set linear_solver=reference
timeout 120 "$b/sap_bench" scenes/humanoid.json --backend cuda --scaling-max 32768 --steps 50 --stats-every 0 \
  --json "$out/json/scaling_humanoid.json" 2>&1 | tail -20 > "$out/scaling.txt"
timeout 120 "$b/sap_bench" scenes/box_stack_5.json --backend cuda --scaling-max 65536 --steps 50 --stats-every 0 \
  --json "$out/json/scaling_box_stack_5.json" 2>&1 | tail -20 >> "$out/scaling.txt"
}
# 4. compute-sanitizer on the CUDA parity tests (a few scenes: the tools slow kernels ~100x).
time_left 150 "compute-sanitizer" && {
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck initcheck; do
  time_left 110 "compute-sanitizer $tool" || break
  timeout 100 "$cs" --tool $tool --error-exitcode 7 "$b/test_cuda_parity" --gtest_filter='*OneStep*pendulum*:*OneStep*box_stack_5*' \
    2>&1 | tail -6 >> "$out/sanitizer.txt"
  echo "compute-sanitizer $tool exit ${PIPESTATUS[0]}" >> "$out/sanitizer.txt"
done
}
# 5. Nsight Compute: every kernel of a few steps of the humanoid at 8192 worlds.
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$ncu" ] && time_left 60 "ncu"; then
  timeout $((budget - SECONDS - 20)) "$ncu" --launch-skip 40 --launch-count 12 --section LaunchStats --section Occupancy --section SpeedOfLight \
    "$b/sap_bench" scenes/humanoid.json --backend cuda --worlds 8192 --steps 3 --warmup 4 --stats-every 0 --quiet \
    > "$out/ncu_humanoid.txt" 2>&1
  echo "ncu exit $?" >> "$out/ncu_humanoid.txt"
fi
(cd "$out" && tar czf gpu_results.tgz json && rm -rf json)
ls -la "$out"
