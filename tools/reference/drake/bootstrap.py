"""pydrake on demand: the pinned Drake wheel in <repo>/.venv-drake, then a re-exec."""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

from . import *  # noqa: F401,F403 (the constants)


# ----------------------------------------------------------------------------------------------
# Bootstrap: make sure pydrake is importable, otherwise install it into .venv-drake and re-exec.
# ----------------------------------------------------------------------------------------------
def _venv_python() -> str:
    return os.path.join(VENV, "bin", "python")


def _pydrake_ok(python: str) -> bool:
    if not os.path.exists(python):
        return False
    r = subprocess.run([python, "-c", "import pydrake.all"], capture_output=True)
    return r.returncode == 0


def setup_venv(version: str = DRAKE_VERSION) -> str:
    """Creates .venv-drake with a Python that has a Drake wheel on PyPI and installs drake.

    Drake publishes manylinux_2_34 x86_64 / macOS wheels for CPython 3.10-3.14 (1.51.1 has
    cp310..cp314); we try the interpreters in order and keep the first that installs."""
    if _pydrake_ok(_venv_python()):
        return _venv_python()
    candidates = []
    for exe in [sys.executable, "python3.11", "python3.12", "python3.10", "python3.13", "python3"]:
        path = exe if os.path.isabs(exe) else subprocess.run(
            ["bash", "-lc", f"command -v {exe}"], capture_output=True, text=True).stdout.strip()
        if path and path not in candidates:
            candidates.append(path)
    errors = []
    for py in candidates:
        ver = subprocess.run([py, "-c", "import sys;print('%d.%d'%sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
        if ver not in ("3.10", "3.11", "3.12", "3.13", "3.14"):
            errors.append(f"{py}: Python {ver} has no Drake wheel")
            continue
        print(f"[setup] creating {VENV} with {py} (Python {ver}) and installing drake=={version}",
              file=sys.stderr)
        subprocess.run(["rm", "-rf", VENV])
        if subprocess.run([py, "-m", "venv", VENV]).returncode != 0:
            errors.append(f"{py}: venv creation failed")
            continue
        r = subprocess.run([_venv_python(), "-m", "pip", "install", "-q", f"drake=={version}"],
                           capture_output=True, text=True)
        if r.returncode == 0 and _pydrake_ok(_venv_python()):
            return _venv_python()
        errors.append(f"{py}: pip install drake=={version} failed:\n{r.stderr[-2000:]}")
    sys.exit("[setup] could not install Drake from PyPI (is PyPI reachable? glibc >= 2.34 on "
             "x86_64 Linux is required by the wheel). Attempts:\n" + "\n".join(errors))


def ensure_drake(argv):
    import importlib
    try:
        importlib.import_module("pydrake.all")
        return
    except ImportError:
        pass
    py = setup_venv()
    os.execv(py, [py, os.path.abspath(sys.argv[0])] + argv)  # the command again, in the venv
