"""Small rotation helpers (numpy only; quaternions are (w, x, y, z))."""
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
from .bootstrap import *  # noqa: F401,F403


# ----------------------------------------------------------------------------------------------
# Small rotation helpers (numpy only; quaternions are (w, x, y, z)).
# ----------------------------------------------------------------------------------------------
def rpy_to_quat(r, p, y):
    cr, sr = math.cos(r / 2), math.sin(r / 2)
    cp, sp = math.cos(p / 2), math.sin(p / 2)
    cy, sy = math.cos(y / 2), math.sin(y / 2)
    # R = Rz(y) Ry(p) Rx(r) (Drake's RollPitchYaw convention)
    q = [cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
         cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy]
    return canon_quat(q)


def canon_quat(q):
    import numpy as np
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q)
    if q[0] < 0:
        q = -q
    return [float(x) for x in q]


def quat_to_mat(q):
    import numpy as np
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def mat_to_quat(R):
    from pydrake.math import RotationMatrix
    q = RotationMatrix(R).ToQuaternion()
    return canon_quat([q.w(), q.x(), q.y(), q.z()])


def pose(pos=(0, 0, 0), rpy=(0, 0, 0)):
    return {"pos": [float(v) for v in pos], "quat_wxyz": rpy_to_quat(*rpy)}


def pose_mat(p):
    import numpy as np
    T = np.eye(4)
    T[:3, :3] = quat_to_mat(p["quat_wxyz"])
    T[:3, 3] = p["pos"]
    return T


def mat_pose(T):
    return {"pos": [float(v) for v in T[:3, 3]], "quat_wxyz": mat_to_quat(T[:3, :3])}
