"""sap: batched articulated-body simulation with SAP frictional contact (docs/python.md).

The C++ core (``sap._sap``, nanobind) is mirrored: :func:`load_scene`, :func:`load_mjcf`,
:func:`load_urdf`, :class:`Simulator`. State and control buffers are :class:`ArrayView` objects
that numpy, torch and JAX wrap without a copy (DLPack, ``__array_interface__``,
``__cuda_array_interface__``).
"""
from ._sap import (  # noqa: F401
    ArrayView,
    Scene,
    Simulator,
    Snapshot,
    cuda_compiled,
    cuda_device_count,
    load_mjcf,
    load_scene,
    load_urdf,
    parse_scene,
    solver_option_names,
)

__all__ = [
    "ArrayView", "Scene", "Simulator", "Snapshot", "cuda_compiled", "cuda_device_count",
    "load_mjcf", "load_scene", "load_urdf", "parse_scene", "solver_option_names",
]
