#!/usr/bin/env bash
# Prepares a GPU session (docs/benchmarks.md, "GPU figures"). The lent GPU machine has nvcc but
# none of our Debian dependencies and no network, so we build here (CUDA on, sm_90) and carry
# the binaries: this script fills .gpu_bundle/ (in .gitignore) with the CUDA tests and the bench
# executables (stripped) and the shared libraries they need that the device image lacks.
# The executables each link the same device code (~35 MB apiece, ~280 MB in all, over the device
# tool's 64 MiB): they travel as one solid xz archive, .gpu_pack/bundle.tar.xz (~15 MB), that
# gpu_run.sh unpacks. Then, with the device tool:  run(command="tools/run/gpu_run.sh", carry=[".gpu_pack"])
# (and tools/run/gpu_profile.sh: one kernel's profile by source line)
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/setup.sh --no-build  # packages only
# The device image's C++ runtime may be older than Debian 12's: link it statically. The library
# is static too (SAP_SHARED=OFF): the executables then run from wherever the device copy lies.
# -lineinfo: the device code's line table, for gpu_profile.sh (no change to the machine code).
cmake -S . -B build-gpu -DSAP_WITH_CUDA=ON -DSAP_SHARED=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="-lineinfo" \
  -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" >/dev/null
cmake --build build-gpu -j"$(nproc)" >/dev/null
rm -rf .gpu_bundle && mkdir -p .gpu_bundle/lib
for exe in sap_bench sap_ablate sap_rollout_bench test_cuda_parity test_collision_pipeline test_scene_physics \
           test_free_motion test_linear_solver test_emulated_team test_fp64_retry test_rollout; do
  cp "build-gpu/$exe" .gpu_bundle/
  strip .gpu_bundle/$exe
done
# Mesh assets (issue 18): Assimp (+ draco, minizip), Qhull, libpng (about 14 MB); zlib is in every image.
for lib in $(ldd build-gpu/sap_bench | awk '/tinyxml2|gtest|libstdc|libgcc_s|assimp|draco|minizip|qhull_r|png16/ {print $3}'); do
  cp -L "$lib" .gpu_bundle/lib/
done
# cuSOLVER (linear_solver = reference) and its cuBLAS are too large to carry (hundreds of MiB):
# gpu_run.sh takes them from the device's own CUDA toolkit (/usr/local/cuda/lib64).
echo "$(pwd)" > .gpu_bundle/source_dir   # tests look for scenes under the build's SAP_SOURCE_DIR
# The device copy has no .git: record which commit (and whether the tree was dirty) was built.
{ git rev-parse HEAD; git status --porcelain --untracked-files=no | grep -q . && echo "(dirty tree)"; } \
  > .gpu_bundle/commit || true
# A dictionary larger than one executable lets xz store the shared device code once.
rm -rf .gpu_pack && mkdir -p .gpu_pack
tar cf - .gpu_bundle | xz -9e --lzma2=dict=192MiB -T1 > .gpu_pack/bundle.tar.xz
du -sh .gpu_bundle .gpu_pack
