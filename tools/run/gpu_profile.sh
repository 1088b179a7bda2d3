#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, with .gpu_pack carried
# (tools/run/gpu_bundle.sh, whose CUDA build has line information): one launch of a kernel of
# sap_bench under Nsight Compute with its source counters, then that kernel's profile by source
# line (tools/checks/gpu_source_profile.py): stall samples, instructions and threads per
# instruction of every line, under $OUT (profile.txt, profile.json, the compressed inputs).
#   run(command="tools/run/gpu_profile.sh", carry=[".gpu_pack"])          (about 40 s on an H100)
# Environment (defaults: the humanoid's fused solve, approx32, 8192 worlds, its 21st launch, in the fall):
#   PROFILE_KERNEL  ncu's regex on the demangled kernel name      SapSolveKernel<double (the first such launch)
#   PROFILE_SYMBOL  a regex on the mangled name of the function   team_kernel_warpINS_14SapSolveKernelIdLb0ELb0E
#                   that ran (its launcher too: team_kernel_warp for a team of 32, team_kernel for a block)
#   PROFILE_SKIP    launches of that kernel to skip               20
#   arguments       sap_bench's, after the scene                  scenes/humanoid.json --worlds 8192 --steps 30 --warmup 4
set -uo pipefail
out=${OUT:-/tmp/gpu_out}
mkdir -p "$out"
kernel=${PROFILE_KERNEL:-SapSolveKernel<double}
symbol=${PROFILE_SYMBOL:-team_kernel_warpINS_14SapSolveKernelIdLb0ELb0E}
skip=${PROFILE_SKIP:-20}
[ $# -gt 0 ] || set -- scenes/humanoid.json --worlds 8192 --steps 30 --warmup 4
[ -d .gpu_bundle ] || python3 -c 'import tarfile; tarfile.open(".gpu_pack/bundle.tar.xz").extractall(".")'
export LD_LIBRARY_PATH="$PWD/.gpu_bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
bench=$PWD/.gpu_bundle/sap_bench
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
cat .gpu_bundle/commit > "$out/commit.txt"
timeout 300 "$ncu" --kernel-name-base demangled -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
  --section SourceCounters --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy \
  -o /tmp/profile "$bench" "$@" --backend cuda --stats-every 0 --quiet > "$out/ncu.txt" 2>&1 || { tail -20 "$out/ncu.txt"; exit 1; }
"$ncu" -i /tmp/profile.ncu-rep --page details >> "$out/ncu.txt" 2>&1
"$ncu" -i /tmp/profile.ncu-rep --page source --csv --print-source sass > /tmp/sass.csv || exit 1
# The kernel's machine code with its line table: the cubin that defines it, disassembled, cut to its section.
rm -rf /tmp/cubins /tmp/disasm.txt && mkdir /tmp/cubins && (cd /tmp/cubins && cuobjdump -xelf all "$bench" > /dev/null)
for f in /tmp/cubins/*.cubin; do
  name=$(cuobjdump -symbols "$f" 2>/dev/null | grep -oE "[^ ]*${symbol}[^ ]*" | head -1)
  [ -n "$name" ] || continue
  echo "gpu_profile: $name in $(basename "$f")" | tee -a "$out/ncu.txt"
  nvdisasm --print-line-info-inline "$f" |
    awk -v s=".text.$name," '/^[[:space:]]*\.section/ {on = index($0, s) > 0} on' > /tmp/disasm.txt
  break
done
[ -s /tmp/disasm.txt ] || { echo "gpu_profile: no cubin defines a function matching $symbol"; exit 1; }
python3 tools/checks/gpu_source_profile.py /tmp/sass.csv /tmp/disasm.txt --json "$out/profile.json" | tee "$out/profile.txt"
gzip -c /tmp/sass.csv > "$out/sass.csv.gz"
gzip -c /tmp/disasm.txt > "$out/disasm.txt.gz"
