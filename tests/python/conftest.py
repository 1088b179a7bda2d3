"""Shared fixtures of the Python tests (run by ctest Python.pytest with PYTHONPATH=<build>/python)."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "scenes"


@pytest.fixture
def root():
    return ROOT


def scene_path(name):
    return str(SCENES / name)


def torch_or_skip():
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("torch not installed (tools/setup_python.sh --torch installs it)")
    return torch


os.environ.setdefault("OMP_NUM_THREADS", "1")
