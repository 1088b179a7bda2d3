#!/usr/bin/env bash
# The Python package as a user gets it (issue 28; CI runs this):
#   1. `pip install ".[gym]"` of this checkout into a fresh virtual environment, then, from /,
#      the bundled humanoid loads and steps and sap.envs.HumanoidStand(4) resets and steps;
#   2. tools/build_wheel.sh's manylinux wheel into another fresh environment, the same checks
#      with the system's copies of the libraries the wheel bundles (assimp, draco, minizip, qhull,
#      tinyxml2, libpng) hidden (bind-mounted over by /dev/null in a private mount namespace;
#      where that is not allowed, `ldd` must resolve them inside the wheel instead).
#   tools/run/test_python_package.sh [--keep DIR]   (--keep: the environments under DIR, kept)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
keep=""
[ "${1:-}" = "--keep" ] && keep=$2
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
py=${PYTHON:-python3}
pipq=(-q --disable-pip-version-check)

# The checks, run from / so that nothing of the checkout is importable or reachable.
cat > "$work/check.py" <<'PY'
import sys
import numpy as np
import sap
assert "site-packages" in sap.__file__, f"sap imported from {sap.__file__}, not the environment"
assert {"humanoid", "box_stack_5", "franka_cube", "g1_rough_terrain"} <= set(sap.scenes()), sap.scenes()
scene = sap.load_scene("humanoid")
sim = sap.Simulator(scene, nworld=4, backend="cpu", threads=1)
torso = scene.body_id("torso")
q0 = np.asarray(sim.qpos).copy()
z0 = np.asarray(sim.body_pos)[:, torso, 2].copy()
sim.step(50)
q = np.asarray(sim.qpos)
z = np.asarray(sim.body_pos)[:, torso, 2]
assert np.isfinite(q).all() and not np.array_equal(q, q0), "the humanoid did not step"
assert np.all(z < z0 - 0.01), f"unpowered, the humanoid must sink from its squat (torso z {z0} -> {z})"
from sap.envs import HumanoidStand
env = HumanoidStand(4)
obs, _ = env.reset(seed=0)
for _ in range(3):
    obs, rew, term, trunc, info = env.step(env.action_space.sample())
assert obs.shape[0] == 4 and np.isfinite(obs).all() and np.isfinite(rew).all()
print(f"check: {sap.__file__}: humanoid stepped (torso z {z.round(3).tolist()}), HumanoidStand(4) reset and stepped")
PY

echo "== 1. pip install \".[gym]\" into a fresh environment"
"$py" -m venv "$work/venv-src"
t0=$(date +%s)
CCACHE_BASEDIR=$repo "$work/venv-src/bin/python" -m pip install "${pipq[@]}" "$repo[gym]" \
  -C cmake.define.SAP_WITH_CUDA=OFF
echo "pip install: $(( $(date +%s) - t0 )) s"
(cd / && "$work/venv-src/bin/python" "$work/check.py")

echo "== 2. the manylinux wheel into another fresh environment, system libraries hidden"
wheel=$(tools/build_wheel.sh --out "$work/dist")
"$py" -m venv "$work/venv-whl"
"$work/venv-whl/bin/python" -m pip install "${pipq[@]}" "$wheel[gym]"
ext=$(ls "$work"/venv-whl/lib/python*/site-packages/sap/_sap*.so)
echo "ldd of the installed extension:"
ldd "$ext" | sed 's/^/  /'
bundled='assimp|draco|minizip|qhull|tinyxml2|png16'
# (No `| grep -q .` under pipefail: its early exit can fail the pipeline by SIGPIPE and hide a match.)
outside=$(ldd "$ext" | grep -E "lib($bundled)" | grep -v "sap.libs/" || true)
if [ -n "$outside" ]; then
  echo "test_python_package: the wheel's extension resolves a bundled library outside sap.libs: $outside" >&2
  exit 1
fi
hidden=()
for lib in libassimp.so.5 libdraco.so.7 libminizip.so.1 libqhull_r.so.8.0 libtinyxml2.so.9 libpng16.so.16; do
  # awk reads ldconfig's whole listing (no early exit): an early exit sent ldconfig SIGPIPE, which
  # pipefail turned into a failed assignment and set -e into a silent exit (about 1 run in 10).
  f=$(/sbin/ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ && !found {print $NF; found = 1}')
  [ -n "$f" ] && hidden+=("$(readlink -f "$f")")
done
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
  echo "hiding ${#hidden[@]} system libraries: ${hidden[*]}"
  unshare -m bash -c '
    set -e
    for f in "$@"; do mount --bind /dev/null "$f"; done
    ! "'"$work"'/venv-whl/bin/python" -c "import ctypes; ctypes.CDLL(\"libassimp.so.5\")" 2>/dev/null ||
      { echo "hiding failed: the system assimp still loads" >&2; exit 1; }
    cd / && "'"$work"'/venv-whl/bin/python" "'"$work"'/check.py"' _ "${hidden[@]}"
else
  echo "no private mount namespace here: the ldd check above stands for the hidden-library run"
  (cd / && "$work/venv-whl/bin/python" "$work/check.py")
fi
echo "test_python_package: OK ($wheel)"
