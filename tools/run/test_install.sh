#!/usr/bin/env bash
# Installs the build tree given as $1 into a temporary prefix and builds examples/ out of tree
# against it with find_package(sap CONFIG) (ctest: Install.ExampleBuildsAgainstInstalledPackage).
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/sap/simulator.hpp"
test -f "$tmp/prefix/lib/cmake/sap/sapConfig.cmake" || test -f "$tmp/prefix/lib64/cmake/sap/sapConfig.cmake"
cmake -S "$src/examples" -B "$tmp/ex" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DSAP_EXAMPLE_SOURCE_DIR="$src" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/ex" -j2 >/dev/null
"$tmp/ex/rollout_humanoid" --nworld 4 --iters 3 --backend cpu --threads 1
(cd "$src" && "$tmp/ex/readme_quickstart")  # the README's C++ snippet (its scene path is relative)
echo "test_install: OK"
