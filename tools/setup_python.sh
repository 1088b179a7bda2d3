#!/usr/bin/env bash
# Creates the Python environment of the sap package's tests (docs/python.md) and prints its
# interpreter. Idempotent: an existing environment with the packages is reused.
#   tools/setup_python.sh [--venv DIR] [--torch] [--viser]
# Default DIR: .venv-py in the repository (git-ignored). Installs from PyPI: nanobind,
# scikit-build-core, numpy, pytest, gymnasium; Debian: python3-venv, libjs-three (the viewer's
# three.js) and chromium (the viewer's headless test). --torch adds PyTorch (gigabytes: the
# distributed test and the PPO example), --viser the live viewer.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-py
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv=$2; shift ;;
    --torch) extra+=(torch) ;;
    --viser) extra+=(viser) ;;
    *) echo "setup_python.sh: unknown option '$1' (expected --venv DIR, --torch, --viser)" >&2; exit 2 ;;
  esac
  shift
done
debs=(python3-venv libjs-three chromium)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup_python: installing ${missing[*]}" >&2
  $sudo_cmd apt-get update -qq >&2
  # chromium is only for the viewer test (skipped without it): do not fail without it.
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv libjs-three >/dev/null 2>&1 || true
fi
py=${PYTHON:-python3}
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv" >&2
pkgs=(nanobind scikit-build-core numpy pytest "gymnasium>=1.0" pillow "${extra[@]}")
if ! "$venv/bin/python" -c "import nanobind, numpy, pytest, gymnasium, PIL" 2>/dev/null || [ ${#extra[@]} -gt 0 ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${pkgs[@]}" >&2
fi
echo "$(cd "$venv" && pwd)/bin/python"
