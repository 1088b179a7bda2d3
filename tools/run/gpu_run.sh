#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, with .gpu_pack carried (tools/run/gpu_bundle.sh):
# a smoke run, the CUDA parity tests, the target benchmarks of docs/benchmarks.md ("GPU figures"),
# the other CUDA tests, compute-sanitizer, a scaling sweep and an Nsight Compute summary, in that
# order of importance. Every part has its own time limit and the later parts run only while time
# is left (GPU_RUN_BUDGET_S seconds in all), so that a hang or a slow part cannot take the results
# of the others with it: the device tool stops a command at its limit and then brings back only
# what is already under $OUT (at most 8 files: JSON results are packed into one archive).
set -uo pipefail
out=${OUT:-/tmp/gpu_out}
budget=${GPU_RUN_BUDGET_S:-500}
mkdir -p "$out/json"
# The bundle travels as one solid xz archive (the executables share the same device code: ~280 MB -> ~15 MB).
[ -f .gpu_pack/bundle.tar.xz ] && python3 -c 'import tarfile; tarfile.open(".gpu_pack/bundle.tar.xz").extractall(".")'
export LD_LIBRARY_PATH="$PWD/.gpu_bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
b=.gpu_bundle
# The tests were compiled with SAP_SOURCE_DIR = the build machine's checkout: point it here.
src=$(cat $b/source_dir)
if [ "$src" != "$PWD" ]; then mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"; fi
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; cat $b/commit; } | tee "$out/device.txt"
time_left() { [ $SECONDS -lt $((budget - $1)) ] || { echo "skipped after ${SECONDS}s: $2" | tee -a "$out/skipped.txt"; false; }; }
bench() {  # bench NAME ARGS...: one sap_bench run (40 s at most), JSON under $out/json, summary lines in bench.txt
  local name=$1; shift
  time_left 45 "bench $name" || return 0
  echo "== $name (t=${SECONDS}s): sap_bench $*" >> "$out/bench.txt"
  timeout 40 "$b/sap_bench" "$@" --backend cuda --json "$out/json/$name.json" 2>&1 | tee "$out/json/$name.log" |
    grep -E 'device|world-steps/s|stages|newton|line search|contacts|truncated|exit status|fp64|failed|error|Error' >> "$out/bench.txt"
  echo "exit ${PIPESTATUS[0]}" >> "$out/bench.txt"
}
gtest() {  # gtest EXE LIMIT_S [ARGS...]: one CUDA test executable, results in tests.txt
  local t=$1 limit=$2; shift 2
  time_left $((limit + 5)) "$t" || return 0
  echo "== $t (t=${SECONDS}s)" >> "$out/tests.txt"
  timeout "$limit" "$b/$t" "$@" 2>&1 | tee "$out/json/$t.log" | grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|error|Expected|Which is|actual|CUDA' |
    head -60 >> "$out/tests.txt"
  echo "$t exit ${PIPESTATUS[0]}" >> "$out/tests.txt"
}
# 0. Smoke: a small humanoid run shows at once whether the CUDA path runs at all.
bench smoke_humanoid_512 scenes/humanoid.json --worlds 512 --steps 20
# 1. CPU-vs-GPU parity (the fp64 CPU path is the oracle).
gtest test_cuda_parity 120
# 2. The targets (8192 worlds).
g1=models/unitree_g1/scene_flat.xml
for p in approx32 approx64 drake; do bench humanoid_${p}_8192 scenes/humanoid.json --worlds 8192 --steps 200 --preset $p; done
bench g1_8192 "$g1" --keyframe home --worlds 8192 --steps 100
bench franka_cube_8192 scenes/franka_cube.json --worlds 8192 --steps 200
bench box_stack_5_8192 scenes/box_stack_5.json --worlds 8192 --steps 200
# The rollout loop (step_n in a CUDA graph, controls in, observations out), as an RL trainer drives it.
time_left 45 "sap_rollout_bench" && { echo "== rollout humanoid 8192 (t=${SECONDS}s)" >> "$out/bench.txt";
  timeout 40 "$b/sap_rollout_bench" scenes/humanoid.json --backend cuda --worlds 8192 2>&1 | tail -12 >> "$out/bench.txt"; }
# step(n) as CUDA-graph replays (sap_bench --graph N) against the plain launches above: launch
# latency matters most for few worlds and light scenes.
bench humanoid_graph10_8192 scenes/humanoid.json --worlds 8192 --steps 200 --graph 10
bench humanoid_graph10_256 scenes/humanoid.json --worlds 256 --steps 200 --graph 10
bench humanoid_plain_256 scenes/humanoid.json --worlds 256 --steps 200
# 3. The other CUDA tests.
# test_rollout loops over backends(): the CUDA graph path (StepNEqualsNSingleSteps), DLPack tensors,
# subset resets and snapshots on the device.
for t in test_collision_pipeline test_rollout test_free_motion test_linear_solver test_fp64_retry test_scene_physics; do gtest $t 60; done
# 4. The fp64 retry inside the CUDA graph (the UR5's failed fp32 steps), and its cost when nothing fails.
bench ur5_retry_4096 tests/data/ur5_box_floor_rigid.json --worlds 4096 --steps 100
bench humanoid_noretry_8192 scenes/humanoid.json --worlds 8192 --steps 200 --set fp64_retry=false
# 5. compute-sanitizer on two parity cases (the tools slow kernels ~100x).
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck initcheck; do
  time_left 100 "compute-sanitizer $tool" || break
  timeout 90 "$cs" --tool $tool --error-exitcode 7 "$b/test_cuda_parity" --gtest_filter='*OneStep*pendulum*:*OneStep*box_stack_5*' \
    2>&1 | tail -6 >> "$out/sanitizer.txt"
  echo "compute-sanitizer $tool exit ${PIPESTATUS[0]}" >> "$out/sanitizer.txt"
done
# 6. Other scenes and scaling.
for s in g1_rough_terrain free_cube multi_joints sphere_on_ground pendulum; do bench ${s}_4096 scenes/$s.json --worlds 4096 --steps 200; done
bench sphere_pile_4096 scenes/sphere_pile.json --worlds 4096 --steps 20  # nv 384: ~10 ms per step
time_left 70 "scaling" && timeout 60 "$b/sap_bench" scenes/box_stack_5.json --backend cuda --scaling-max 65536 --steps 50 --stats-every 0 \
  --json "$out/json/scaling_box_stack_5.json" 2>&1 | tail -20 > "$out/scaling.txt"
time_left 70 "scaling" && timeout 60 "$b/sap_bench" scenes/humanoid.json --backend cuda --scaling-max 32768 --steps 50 --stats-every 0 \
  --json "$out/json/scaling_humanoid.json" 2>&1 | tail -20 >> "$out/scaling.txt"
# 7. Nsight Compute: every kernel of a few steps of the humanoid at 8192 worlds.
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$ncu" ] && time_left 50 "ncu"; then
  timeout $((budget - SECONDS - 15)) "$ncu" --launch-skip 40 --launch-count 12 --section LaunchStats --section Occupancy --section SpeedOfLight \
    "$b/sap_bench" scenes/humanoid.json --backend cuda --worlds 8192 --steps 3 --warmup 4 --stats-every 0 --quiet \
    > "$out/ncu_humanoid.txt" 2>&1
  echo "ncu exit $?" >> "$out/ncu_humanoid.txt"
fi
echo "done at ${SECONDS}s" >> "$out/bench.txt"
(cd "$out" && tar czf gpu_results.tgz json && rm -rf json)
ls -la "$out"
