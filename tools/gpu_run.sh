#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, with .gpu_bundle carried (tools/gpu_bundle.sh):
# the CUDA parity tests, the default benchmark, a scaling sweep and the per-scene table on CUDA.
# Everything is written under $OUT (the device tool brings it back).
set -uo pipefail
out=${OUT:-/tmp/gpu_out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu_bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
# The tests were compiled with SAP_SOURCE_DIR = the build machine's checkout: point it here.
src=$(cat .gpu_bundle/source_dir)
if [ "$src" != "$PWD" ]; then mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"; fi
b=.gpu_bundle
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/device.txt"
git rev-parse HEAD 2>/dev/null | tee -a "$out/device.txt"
for t in test_cuda_parity test_collision_pipeline test_scene_physics test_free_motion; do
  "$b/$t" 2>&1 | tail -25 | tee -a "$out/tests.txt"
done
# compute-sanitizer on the CUDA parity tests (a few scenes: the tools slow kernels ~100x).
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$cs" ]; then
  for tool in memcheck racecheck synccheck initcheck; do
    "$cs" --tool $tool --error-exitcode 7 "$b/test_cuda_parity" --gtest_filter='*OneStep*pendulum*:*OneStep*box_stack_5*' \
      2>&1 | tail -15 | tee -a "$out/sanitizer.txt"
    echo "compute-sanitizer $tool exit ${PIPESTATUS[0]}" | tee -a "$out/sanitizer.txt"
  done
else
  echo "compute-sanitizer not found" | tee -a "$out/sanitizer.txt"
fi
# Reference linear solve (cuSOLVER batched) against our Cholesky, humanoid.
for ls in cholesky reference; do
  "$b/sap_bench" scenes/humanoid.json --backend cuda --worlds 4096 --steps 100 --set linear_solver=$ls --quiet \
    --json "$out/gpu_humanoid_ls_$ls.json" || true
done
"$b/sap_bench" scenes/box_stack_5.json --backend cuda --worlds 8192 --steps 500 --json "$out/main_box_stack_5_gpu.json" 2>&1 | tee "$out/main.txt"
"$b/sap_bench" scenes/box_stack_5.json --backend cuda --scaling-max 65536 --steps 50 --min-time 1 \
  --json "$out/scaling_box_stack_5_gpu.json" 2>&1 | tail -20 | tee "$out/scaling.txt"
for s in humanoid franka_cube free_cube multi_joints sphere_on_ground; do
  "$b/sap_bench" "scenes/$s.json" --backend cuda --worlds 4096 --steps 200 --quiet --json "$out/gpu_$s.json" || true
done
for p in approx32 drake; do
  "$b/sap_bench" scenes/humanoid.json --backend cuda --worlds 4096 --steps 200 --preset $p --quiet --json "$out/gpu_humanoid_$p.json" || true
done
ls -la "$out"
# The device tool brings back at most 8 files: pack the JSON results into one archive.
(cd "$out" && tar czf gpu_results.tgz ./*.json && rm -f ./*.json)
ls -la "$out"
