"""sap: batched articulated-body simulation with SAP frictional contact (docs/python.md).

The C++ core (``sap._sap``, nanobind) is mirrored: :func:`load_scene`, :func:`load_mjcf`,
:func:`load_urdf`, :class:`Simulator`. State and control buffers are :class:`ArrayView` objects
that numpy, torch and JAX wrap without a copy (DLPack, ``__array_interface__``,
``__cuda_array_interface__``).

The package carries the repository's scenes and the models they use (``sap/data``):
``sap.load_scene("humanoid")`` loads a bundled scene by name, :func:`scenes` lists the names and
:func:`data_dir` is where they are (the models under ``data_dir() / "models"``).
"""
from __future__ import annotations

import os
import pathlib

from . import _sap
from ._sap import (  # noqa: F401
    ArrayView,
    Scene,
    Simulator,
    Snapshot,
    cuda_compiled,
    cuda_device_count,
    parse_scene,
    solver_option_names,
)

__all__ = [
    "ArrayView", "Scene", "Simulator", "Snapshot", "cuda_compiled", "cuda_device_count", "data_dir",
    "load_mjcf", "load_scene", "load_urdf", "parse_scene", "scenes", "solver_option_names",
]


def data_dir() -> pathlib.Path:
    """The folder of the bundled data: ``scenes/`` (JSON scenes) and ``models/`` (the MJCF models
    they use, each with its license). Installed packages carry it as package data; a build tree's
    package links it to the repository's folders."""
    return pathlib.Path(__file__).resolve().parent / "data"


def scenes() -> list[str]:
    """Names of the bundled scenes, for :func:`load_scene` (``"humanoid"``, ``"box_stack_5"``, ...)."""
    d = data_dir() / "scenes"
    return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []


def load_scene(name_or_path) -> Scene:
    """Loads a JSON scene (docs/scene-format.md): a file path, or the name of a bundled scene
    (:func:`scenes`; ``"humanoid"`` or ``"humanoid.json"``). An existing path wins over a name.

    Raises FileNotFoundError when neither a file nor a bundled scene has that name (or when a
    file the scene names is missing), ValueError/RuntimeError with ``<file>: <json pointer>:
    <what was expected>`` for a malformed scene."""
    p = os.fspath(name_or_path)
    if os.path.exists(p):
        return _sap.load_scene(p)
    stem = p[:-5] if p.endswith(".json") else p
    bundled = data_dir() / "scenes" / (stem + ".json")
    if os.sep not in stem and bundled.is_file():
        return _sap.load_scene(str(bundled))
    names = ", ".join(scenes()) or "none (the package data is missing)"
    raise FileNotFoundError(2, f"{p}: no such scene file, and no bundled scene of that name "
                               f"(bundled: {names})", p)


def load_mjcf(path) -> Scene:
    """Loads an MJCF file (a path or os.PathLike) as a one-world Scene: the file's time step and
    qpos0, zero controls. A missing file raises FileNotFoundError."""
    return _sap.load_mjcf(os.fspath(path))


def load_urdf(path) -> Scene:
    """Loads a URDF file (a path or os.PathLike) as a one-world Scene. A missing file raises
    FileNotFoundError."""
    return _sap.load_urdf(os.fspath(path))
