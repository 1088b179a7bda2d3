#!/usr/bin/env bash
# Runs sap_bench on every scene of scenes/*.json and prints the Markdown table of
# docs/benchmarks.md (tools/plots/bench_table.py). Records go to bench/results/<tag>/<scene>.json.
#   tools/run/bench_scenes.sh [--tag cpu] [--backend cpu|cuda|auto] [--worlds 256] [--heavy-worlds 16]
#                         [--steps 200] [--min-time 1] [--build build] [--scenes "name ..."]
#                         [-- extra sap_bench options]
# --heavy-worlds applies to the scenes with many dofs (sphere_pile, humanoid, franka_cube), whose
# dense per-world solves cost far more per world-step than the small scenes. --min-time repeats
# short timed windows until they last that long (sap_bench --min-time), for stable figures.
set -euo pipefail
cd "$(dirname "$0")/../.."

tag=cpu backend=cpu worlds=256 heavy=16 steps=200 min_time=1 build=build only=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift ;;
    --backend) backend=$2; shift ;;
    --worlds) worlds=$2; shift ;;
    --heavy-worlds) heavy=$2; shift ;;
    --steps) steps=$2; shift ;;
    --min-time) min_time=$2; shift ;;
    --build) build=$2; shift ;;
    --scenes) only=$2; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "bench_scenes.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done

out=bench/results/$tag
mkdir -p "$out"
status=0
for scene in scenes/*.json; do
  name=$(basename "$scene" .json)
  if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then continue; fi
  n=$worlds
  case "$name" in sphere_pile|humanoid|franka_cube) n=$heavy ;; esac
  echo "+ $build/sap_bench $scene --worlds $n --steps $steps --min-time $min_time --backend $backend --json $out/$name.json --quiet ${extra[*]}" >&2
  if ! "$build/sap_bench" "$scene" --worlds "$n" --steps "$steps" --min-time "$min_time" --backend "$backend" --json "$out/$name.json" \
      --quiet "${extra[@]}"; then
    echo "bench_scenes.sh: $name failed (exit code above; 3 = failed worlds or non-finite state)" >&2
    status=1
  fi
done
python3 tools/plots/bench_table.py "$out"/*.json
exit $status
