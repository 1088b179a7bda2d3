#!/usr/bin/env python3
"""Reference trajectories from Drake's own SAP solver, written as self-describing JSON fixtures.

Each scene is defined once, as plain data (bodies, joints, geometries, materials, actuators,
initial state). The same data builds the Drake MultibodyPlant (discrete, SAP approximation,
point contact) and is written into the fixture, together with the per-step trajectory in
Drake's coordinates and in ours (MuJoCo-style free-joint convention), so a C++ test can rebuild
the scene with sap::ModelBuilder and compare. See tests/data/drake/README.md for the schema and
docs/drake-mapping.md for the parameter mapping and what was verified.

Commands (run from anywhere; Drake is installed on first use into <repo>/.venv-drake):
  python3 tools/drake_reference.py generate [--scene NAME ...] [--out DIR]
  python3 tools/drake_reference.py verify   [--out DIR]   # replay every step with a numpy SAP
  python3 tools/drake_reference.py probe                  # one-step experiments on Drake's rules
  python3 tools/drake_reference.py setup                  # only create the venv / install Drake

The numpy SAP in `verify` re-implements docs/sap-math.md (contact, limit and PD constraints,
Newton with an exact line search) on top of Drake's kinematics (M, bias, Jacobians) and our own
sphere/half-space geometry from the fixture; agreement with Drake's next-step velocities to the
solver tolerance validates both the formulas and the fixture's scene description.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(REPO, ".venv-drake")
DRAKE_VERSION = "1.51.1"  # pinned: fixtures are regenerated bit-for-bit only with the same wheel
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "drake")
SCHEMA = "sap-drake-reference/1"

# Drake constants that the Python API does not expose (documented in docs/drake-mapping.md).
DRAKE_SIGMA = 1e-3            # friction regularisation, hard-coded in sap_driver.cc
DRAKE_SOFT_NORM_EPS = 1e-7    # soft norm of the tangential impulse, sap_friction_cone_constraint
DRAKE_LIMIT_STIFFNESS = 1e12  # joint-limit constraint stiffness, sap_driver.cc
DRAKE_LIMIT_BETA = 0.1        # near-rigid threshold of limit constraints
DRAKE_LIMIT_WINDOW = 2.0      # limits are added only within q0 +- 2 h max(|v0|, |v*|)
DRAKE_PD_BETA = 0.1           # near-rigid threshold of PD constraints
DRAKE_STICTION_TOLERANCE = 1e-4  # MultibodyPlantConfig default v_s of the similar/lagged friction
DRAKE_SAP_DEFAULTS = {"rel_tolerance": 1e-6, "abs_tolerance": 1e-14, "cost_rel_tolerance": 1e-15,
                      "cost_abs_tolerance": 1e-30, "max_iterations": 100, "line_search": "exact"}


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
    os.execv(py, [py, os.path.abspath(__file__)] + argv)


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


# ----------------------------------------------------------------------------------------------
# Scene definitions (plain data; everything the fixture needs to be rebuilt elsewhere).
# ----------------------------------------------------------------------------------------------
def material(k, tau, mu_dynamic, mu_static=None, hc_d=None):
    m = {"point_contact_stiffness": float(k), "relaxation_time": float(tau),
         "mu_dynamic": float(mu_dynamic),
         "mu_static": float(mu_dynamic if mu_static is None else mu_static)}
    if hc_d is not None:  # Hunt-Crossley dissipation (s/m): used by the similar/lagged approximations only
        m["hunt_crossley_dissipation"] = float(hc_d)
    return m


def box_inertia(m, half, products=(0, 0, 0)):
    a, b, c = (2 * h for h in half)
    return [m / 12 * (b * b + c * c), m / 12 * (a * a + c * c), m / 12 * (a * a + b * b)] + list(products)


def corner_spheres(prefix, half, r, mat):
    """Eight spheres whose hull touches the faces of the box with half extents `half`."""
    out = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            for sz in (-1, 1):
                c = [sx * (half[0] - r), sy * (half[1] - r), sz * (half[2] - r)]
                name = f"{prefix}_{'p' if sx > 0 else 'm'}{'p' if sy > 0 else 'm'}{'p' if sz > 0 else 'm'}"
                out.append({"name": name, "body": prefix, "shape": "sphere", "size": [r, 0.0, 0.0],
                            "X_BG": pose(c), "material": mat})
    return out


def scene_sphere_drop():
    r = 0.03
    # Body origin = com = sphere centre. An origin offset from the com is exercised by the box
    # scenes; here it would add an O(h w^2 |r|) per-step apparent slip (Drake's free-body velocity
    # is that of the body origin, integrated with symplectic Euler), see docs/drake-mapping.md.
    center = [0.0, 0.0, 0.0]
    ball = {"name": "ball", "mass": 0.73, "com_B": center,
            "inertia_com_B": [2.9e-4, 3.3e-4, 3.7e-4, 2.0e-5, -1.5e-5, 1.0e-5]}
    ground_z = -0.02
    q0 = rpy_to_quat(0.4, -0.3, 1.1)
    p_WB = [0.05, 0.02, ground_z + r + 0.10]
    return {
        "name": "sphere_drop",
        "description": "Free sphere (com at the sphere centre and body origin, non-diagonal "
                       "central inertia) dropped 0.10 m onto a half-space with lateral "
                       "velocity and spin; bounces, slides, then rolls. Near-rigid threshold disabled "
                       "(beta = 0), so the resting overlap is m g / k exactly.",
        "time_step": 5e-3, "num_steps": 150, "near_rigid_threshold": 0.0,
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [ball],
        "joints": [{"name": "ball_free", "type": "free", "parent": "world", "child": "ball"}],
        "geoms": [
            {"name": "ground", "body": "world", "shape": "halfspace", "size": [0.0, 0.0, 0.0],
             "X_BG": pose([0.0, 0.0, ground_z]), "material": material(6e4, 0.004, 0.5, 0.7)},
            {"name": "ball_geom", "body": "ball", "shape": "sphere", "size": [r, 0.0, 0.0],
             "X_BG": pose(center), "material": material(2e4, 0.002, 0.4, 0.6)},
        ],
        "actuators": [],
        "initial": {"ball_free": {"p_WB": [float(x) for x in p_WB], "quat_WB": q0,
                                  "v_WB": [0.8, -0.3, 0.0], "w_WB": [4.0, -6.0, 10.0]}},
    }


def scene_box_slide():
    half = [0.1, 0.06, 0.04]
    m = 1.7
    box = {"name": "box", "mass": m, "com_B": [0.01, -0.004, -0.006],
           "inertia_com_B": box_inertia(m, half, (2.0e-4, -1.0e-4, 5.0e-5))}
    mat_box = material(2e5, 1e-3, 0.45, 0.5)
    k_eff = 2e5 * 3e5 / 5e5
    z0 = half[2] - m * 9.81 / (4 * k_eff)  # start at the static overlap of the four bottom spheres
    return {
        "name": "box_slide",
        "description": "Box (8 corner spheres, off-centre com, non-diagonal inertia) launched "
                       "along the ground at 0.618 m/s; friction stops it after ~0.12 s. SAP's "
                       "'gliding' (normal separation velocity ~ mu |v_t| while sliding) makes it hop "
                       "slightly at the start; that is Drake's behaviour and part of the reference.",
        "time_step": 1e-3, "num_steps": 140, "near_rigid_threshold": 1.0,
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [box],
        "joints": [{"name": "box_free", "type": "free", "parent": "world", "child": "box"}],
        "geoms": [{"name": "ground", "body": "world", "shape": "halfspace", "size": [0.0, 0.0, 0.0],
                   "X_BG": pose(), "material": material(3e5, 1e-3, 0.6, 0.8)}]
                 + corner_spheres("box", half, 0.005, mat_box),
        "actuators": [],
        "initial": {"box_free": {"p_WB": [0.0, 0.0, z0], "quat_WB": rpy_to_quat(0, 0, 0.25),
                                 "v_WB": [0.6, 0.15, 0.0], "w_WB": [0.0, 0.0, 0.0]}},
    }


def scene_box_incline(theta_deg, name, k, tau, num_steps):
    import numpy as np
    th = math.radians(theta_deg)
    half = [0.08, 0.05, 0.03]
    m = 0.9
    box = {"name": "box", "mass": m, "com_B": [-0.006, 0.003, 0.002],
           "inertia_com_B": box_inertia(m, half, (-6.0e-5, 3.0e-5, 2.0e-5))}
    plane_origin = np.array([0.1, -0.05, 0.2])
    R = quat_to_mat(rpy_to_quat(0, th, 0))  # plane normal = R z = (sin th, 0, cos th)
    n = R[:, 2]
    k_eff = k / 2
    overlap = m * 9.81 * math.cos(th) / (4 * k_eff)  # static overlap of the four bottom spheres
    p_WB = plane_origin + (half[2] - overlap) * n
    mu_eff = 2 * 0.4 * 0.8 / (0.4 + 0.8)
    near_rigid = " Stiff contact (k = %g N/m combined): Drake's near-rigid floor (beta = 1) is active." % k_eff \
        if k_eff > 1e6 else ""
    regime = "sticks" if math.tan(th) < mu_eff else "slides"
    return {
        "name": name,
        "description": f"Box (8 corner spheres) released at rest on a half-space tilted by "
                       f"{theta_deg} deg about world y (plane normal (sin, 0, cos)); downhill is the "
                       f"plane's +x axis. Combined mu = {mu_eff:.6f}, tan(theta) = {math.tan(th):.6f}: "
                       f"the box {regime}." + near_rigid
                       + (" While sliding, SAP's 'gliding' (separation velocity ~ mu |v_t| at sliding "
                          "contacts) makes the box hop: some steps have fewer than 4 or no contacts."
                          if regime == "slides" else ""),
        "time_step": 1e-3, "num_steps": num_steps, "near_rigid_threshold": 1.0,
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [box],
        "joints": [{"name": "box_free", "type": "free", "parent": "world", "child": "box"}],
        "geoms": [{"name": "incline", "body": "world", "shape": "halfspace", "size": [0.0, 0.0, 0.0],
                   "X_BG": {"pos": [float(x) for x in plane_origin], "quat_wxyz": rpy_to_quat(0, th, 0)},
                   "material": material(k, tau, 0.8, 0.9)}]
                 + corner_spheres("box", half, 0.004, material(k, tau, 0.4, 0.5)),
        "actuators": [],
        "initial": {"box_free": {"p_WB": [float(x) for x in p_WB], "quat_WB": rpy_to_quat(0, th, 0),
                                 "v_WB": [0.0, 0.0, 0.0], "w_WB": [0.0, 0.0, 0.0]}},
        "incline_deg": theta_deg,
    }


def scene_arm_limits():
    return {
        "name": "arm_limits",
        "description": "Two-link arm (revolute shoulder on the world, revolute elbow; joint damping, "
                       "position limits, off-centre coms, non-diagonal inertias, tilted joint frames) "
                       "released from rest; the shoulder reaches its upper limit and the tip sphere "
                       "hits the ground.",
        "time_step": 5e-3, "num_steps": 120, "near_rigid_threshold": 1.0,
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [
            {"name": "link1", "mass": 0.9, "com_B": [0.15, 0.004, -0.003],
             "inertia_com_B": [1.2e-3, 7.5e-3, 7.8e-3, 1.0e-4, -2.0e-4, 5.0e-5]},
            {"name": "link2", "mass": 0.55, "com_B": [0.13, -0.003, 0.002],
             "inertia_com_B": [5.0e-4, 4.1e-3, 4.3e-3, -5.0e-5, 1.0e-4, 2.0e-5]},
        ],
        "joints": [
            {"name": "shoulder", "type": "revolute", "parent": "world", "child": "link1",
             "X_PF": pose([0.0, 0.0, 0.42], [0.15, 0.0, 0.3]), "X_CM": pose([-0.01, 0.0, 0.0], [0.0, 0.0, 0.1]),
             "axis": [0.0, 1.0, 0.0], "damping": 0.08, "limits": [-1.0, 0.55]},
            {"name": "elbow", "type": "revolute", "parent": "link1", "child": "link2",
             "X_PF": pose([0.3, 0.0, 0.0]), "X_CM": pose([0.0, 0.0, 0.0]),
             "axis": [0.0, 1.0, 0.0], "damping": 0.03, "limits": [-0.4, 1.3]},
        ],
        "geoms": [
            {"name": "ground", "body": "world", "shape": "halfspace", "size": [0.0, 0.0, 0.0],
             "X_BG": pose(), "material": material(2e5, 0.005, 0.7)},
            {"name": "elbow_sphere", "body": "link1", "shape": "sphere", "size": [0.025, 0.0, 0.0],
             "X_BG": pose([0.3, 0.0, 0.0]), "material": material(2e5, 0.005, 0.6)},
            {"name": "tip_sphere", "body": "link2", "shape": "sphere", "size": [0.03, 0.0, 0.0],
             "X_BG": pose([0.28, 0.0, 0.0]), "material": material(2e5, 0.005, 0.6)},
        ],
        "actuators": [],
        "initial": {"shoulder": {"q": 0.0, "v": 0.0}, "elbow": {"q": 0.2, "v": -0.5}},
    }


def scene_pd_effort():
    return {
        "name": "pd_effort",
        "description": "Single-link pendulum on a tilted revolute joint driven by Drake's implicit PD "
                       "actuator (Kp = 60, Kd = 4, feed-forward 0.25 N m) toward q_d = -0.6 rad from "
                       "q = 0.9 rad (lifting the link against gravity); the effort limit (3 N m) is active "
                       "during the acceleration phase (t < ~0.23 s), then the PD settles at ~-0.568 rad "
                       "(gravity offset).",
        "time_step": 5e-3, "num_steps": 160, "near_rigid_threshold": 1.0,
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [{"name": "link", "mass": 1.1, "com_B": [0.16, 0.01, -0.004],
                    "inertia_com_B": [1.5e-3, 9.4e-3, 9.9e-3, 2.0e-4, 1.0e-4, -1.0e-4]}],
        "joints": [{"name": "hinge", "type": "revolute", "parent": "world", "child": "link",
                    "X_PF": pose([0.05, -0.02, 0.8], [0.2, 0.0, 0.0]), "X_CM": pose([-0.02, 0.0, 0.01]),
                    "axis": [0.0, 1.0, 0.0], "damping": 0.02, "limits": None}],
        "geoms": [],
        "actuators": [{"name": "hinge_pd", "joint": "hinge", "kp": 60.0, "kd": 4.0, "effort_limit": 3.0,
                       "q_target": -0.6, "v_target": 0.0, "u_ff": 0.25}],
        "initial": {"hinge": {"q": 0.9, "v": 0.0}},
    }


def with_hunt_crossley(scene, approximation, d_by_geom):
    """The scene under Drake's similar or lagged approximation, with Hunt-Crossley dissipation
    d_by_geom(geom) (s/m) on every geometry."""
    import copy
    s = copy.deepcopy(scene)
    s["name"] = f"{scene['name']}_{approximation}"
    s["contact_approximation"] = approximation
    s["description"] = (f"{scene['description']} Contact approximation '{approximation}' (Hunt-Crossley "
                        f"dissipation on every geometry; stiction tolerance {DRAKE_STICTION_TOLERANCE} m/s).")
    for g in s["geoms"]:
        g["material"]["hunt_crossley_dissipation"] = float(d_by_geom(g))
    return s


def scene_box_stack():
    """Two boxes of 8 corner spheres each, the upper one resting on the lower one's top corners."""
    half = [0.06, 0.05, 0.04]
    r = 0.006
    m_lo, m_hi = 1.3, 0.8
    mat = material(1e5, 1e-3, 0.5, 0.6)
    k_eff = 1e5 / 2
    z_lo = half[2] - (m_lo + m_hi) * 9.81 / (4 * k_eff)
    z_hi = z_lo + 2 * half[2] - m_hi * 9.81 / (4 * k_eff) - 2e-4
    return {
        "name": "box_stack",
        "description": "Two boxes (8 corner spheres each) stacked on a half-space, the upper one slightly "
                       "rotated and pushed sideways; it slides on the lower box's top corner spheres and "
                       "settles.",
        "time_step": 2e-3, "num_steps": 120, "near_rigid_threshold": 1.0,
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [{"name": "lower", "mass": m_lo, "com_B": [0.0, 0.0, 0.0], "inertia_com_B": box_inertia(m_lo, half)},
                   {"name": "upper", "mass": m_hi, "com_B": [0.003, -0.002, 0.001],
                    "inertia_com_B": box_inertia(m_hi, half, (1.0e-5, -2.0e-5, 1.0e-5))}],
        "joints": [{"name": "lower_free", "type": "free", "parent": "world", "child": "lower"},
                   {"name": "upper_free", "type": "free", "parent": "world", "child": "upper"}],
        "geoms": [{"name": "ground", "body": "world", "shape": "halfspace", "size": [0.0, 0.0, 0.0],
                   "X_BG": pose(), "material": material(1e5, 1e-3, 0.7)}]
                 + corner_spheres("lower", half, r, mat) + corner_spheres("upper", half, r, mat),
        "actuators": [],
        "initial": {"lower_free": {"p_WB": [0.0, 0.0, z_lo], "quat_WB": [1.0, 0.0, 0.0, 0.0],
                                   "v_WB": [0.0, 0.0, 0.0], "w_WB": [0.0, 0.0, 0.0]},
                    "upper_free": {"p_WB": [0.004, -0.003, z_hi], "quat_WB": rpy_to_quat(0, 0, 0.05),
                                   "v_WB": [0.08, 0.02, 0.0], "w_WB": [0.0, 0.0, 0.3]}},
    }


def hunt_crossley_scenes():
    """Fixtures of the similar and lagged approximations (issue: sliding box, sphere drop, small stack).
    The dissipation differs per geometry so that the combination rule (kB dA + kA dB)/(kA + kB) matters."""
    out = []
    for approx in ("similar", "lagged"):
        out.append(with_hunt_crossley(scene_sphere_drop(), approx, lambda g: 8.0 if g["body"] == "world" else 20.0))
        out.append(with_hunt_crossley(scene_box_slide(), approx, lambda g: 5.0 if g["body"] == "world" else 15.0))
        out.append(with_hunt_crossley(scene_box_stack(), approx, lambda g: 10.0 if g["body"] == "world" else 30.0))
    return out


def scene_coupler_arms():
    return {
        "name": "coupler_arms",
        "description": "Two links on revolute joints about y (tilted frames, off-centre coms) coupled by Drake's "
                       "coupler constraint q_left = -0.5 q_right + 0.1 (SapCouplerConstraint, near-rigid), released "
                       "from a consistent pose with inconsistent velocities; the pair swings under gravity.",
        "time_step": 4e-3, "num_steps": 150, "near_rigid_threshold": 1.0,
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [
            {"name": "left", "mass": 0.8, "com_B": [0.12, 0.003, -0.002],
             "inertia_com_B": [1.0e-3, 6.5e-3, 6.8e-3, 1.0e-4, -1.0e-4, 3.0e-5]},
            {"name": "right", "mass": 1.3, "com_B": [0.18, -0.002, 0.004],
             "inertia_com_B": [1.6e-3, 1.2e-2, 1.25e-2, -8.0e-5, 2.0e-4, 1.0e-5]},
        ],
        "joints": [
            {"name": "left_hinge", "type": "revolute", "parent": "world", "child": "left",
             "X_PF": pose([0.0, 0.0, 0.8], [0.1, 0.0, 0.0]), "X_CM": pose([-0.01, 0.0, 0.0]),
             "axis": [0.0, 1.0, 0.0], "damping": 0.02, "limits": None},
            {"name": "right_hinge", "type": "revolute", "parent": "world", "child": "right",
             "X_PF": pose([0.5, 0.1, 0.8], [0.0, 0.0, 0.2]), "X_CM": pose([0.0, 0.0, 0.0]),
             "axis": [0.0, 1.0, 0.0], "damping": 0.05, "limits": None},
        ],
        "geoms": [], "actuators": [],
        "couplers": [{"joint0": "left_hinge", "joint1": "right_hinge", "gear_ratio": -0.5, "offset": 0.1}],
        "initial": {"left_hinge": {"q": -0.1, "v": 0.5}, "right_hinge": {"q": 0.4, "v": -0.3}},
    }


def scene_weld_pendulum():
    import numpy as np
    # A free box welded (SapWeldConstraint, near-rigid) to the tip of a revolute pendulum; it
    # starts 2 mm and 0.02 rad away from the weld pose, at rest while the pendulum swings.
    q0, X_AP, X_BQ = 0.3, pose([0.3, 0.0, 0.0], [0.0, 0.0, 0.0]), pose([-0.05, 0.0, 0.02], [0.0, 0.1, 0.0])
    c, s_ = math.cos(q0), math.sin(q0)
    T_WA = np.eye(4)
    T_WA[:3, :3] = np.array([[c, 0, s_], [0, 1, 0], [-s_, 0, c]])  # rotation about y by q0
    T_WA[:3, 3] = [0.0, 0.0, 1.0]
    T_WB = T_WA @ pose_mat(X_AP) @ np.linalg.inv(pose_mat(X_BQ))
    T_off = pose_mat(pose([0.002, -0.001, 0.001], [0.0, 0.0, 0.02]))
    T_WB = T_WB @ T_off
    B = mat_pose(T_WB)
    return {
        "name": "weld_pendulum",
        "description": "A 0.6 kg free body (non-diagonal inertia) welded by Drake's weld constraint (frames P on "
                       "the pendulum tip, Q off the body origin) to a 1 kg revolute pendulum; it starts 2 mm and "
                       "0.02 rad off the weld pose, at rest, while the pendulum swings at 1.5 rad/s.",
        "time_step": 4e-3, "num_steps": 150, "near_rigid_threshold": 1.0,
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [
            {"name": "pendulum", "mass": 1.0, "com_B": [0.15, 0.0, 0.002],
             "inertia_com_B": [1.2e-3, 8.0e-3, 8.2e-3, 0.0, 1.0e-4, 0.0]},
            {"name": "box", "mass": 0.6, "com_B": [0.01, -0.005, 0.0],
             "inertia_com_B": [9.0e-4, 1.1e-3, 1.3e-3, 5.0e-5, -2.0e-5, 1.0e-5]},
        ],
        "joints": [
            {"name": "pivot", "type": "revolute", "parent": "world", "child": "pendulum",
             "X_PF": pose([0.0, 0.0, 1.0]), "X_CM": pose(), "axis": [0.0, 1.0, 0.0], "damping": 0.01,
             "limits": None},
            {"name": "box_free", "type": "free", "parent": "world", "child": "box"},
        ],
        "geoms": [], "actuators": [],
        "welds": [{"body_A": "pendulum", "X_AP": X_AP, "body_B": "box", "X_BQ": X_BQ}],
        "initial": {"pivot": {"q": q0, "v": 1.5},
                    "box_free": {"quat_WB": B["quat_wxyz"], "p_WB": B["pos"], "w_WB": [0.0, 0.0, 0.0],
                                 "v_WB": [0.0, 0.0, 0.0]}},
    }


def all_scenes():
    return [scene_sphere_drop(), scene_box_slide(), scene_box_incline(20.0, "box_incline_stick", 1e8, 1e-4, 60),
            scene_box_incline(35.0, "box_incline_slide", 1e4, 0.02, 120), scene_arm_limits(), scene_pd_effort(),
            scene_coupler_arms(), scene_weld_pendulum()] + hunt_crossley_scenes()


# ----------------------------------------------------------------------------------------------
# Building the Drake plant from a scene.
# ----------------------------------------------------------------------------------------------
def drake_transform(p):
    from pydrake.all import Quaternion, RigidTransform
    w, x, y, z = p["quat_wxyz"]
    return RigidTransform(Quaternion(w, x, y, z), p["pos"])


def build_drake(scene, use_sampled_output_ports=False):
    from pydrake.all import (AddContactMaterial, AddMultibodyPlant, CoulombFriction, DiagramBuilder,
                             HalfSpace, MultibodyPlantConfig, PdControllerGains, ProximityProperties,
                             QuaternionFloatingJoint, RevoluteJoint, RotationalInertia, SpatialInertia,
                             Sphere, FixedOffsetFrame)
    import numpy as np
    h = scene["time_step"]
    cfg = MultibodyPlantConfig(time_step=h, discrete_contact_approximation=scene.get("contact_approximation", "sap"),
                               contact_model="point", sap_near_rigid_threshold=scene["near_rigid_threshold"],
                               stiction_tolerance=DRAKE_STICTION_TOLERANCE,
                               use_sampled_output_ports=use_sampled_output_ports)
    builder = DiagramBuilder()
    plant, sg = AddMultibodyPlant(cfg, builder)
    plant.mutable_gravity_field().set_gravity_vector(scene["gravity"])
    bodies = {"world": plant.world_body()}
    for b in scene["bodies"]:
        I = RotationalInertia(*b["inertia_com_B"])
        M = SpatialInertia.MakeFromCentralInertia(b["mass"], np.array(b["com_B"]), I)
        bodies[b["name"]] = plant.AddRigidBody(b["name"], M)
    joints = {}
    for j in scene["joints"]:
        P, C = bodies[j["parent"]], bodies[j["child"]]
        if j["type"] == "free":
            joints[j["name"]] = plant.AddJoint(QuaternionFloatingJoint(j["name"], P.body_frame(), C.body_frame()))
        elif j["type"] == "revolute":
            F = plant.AddFrame(FixedOffsetFrame(j["name"] + "_F", P.body_frame(), drake_transform(j["X_PF"])))
            Mf = plant.AddFrame(FixedOffsetFrame(j["name"] + "_M", C.body_frame(), drake_transform(j["X_CM"])))
            jt = plant.AddJoint(RevoluteJoint(j["name"], F, Mf, np.array(j["axis"]), j["damping"]))
            if j.get("limits"):
                jt.set_position_limits(np.array([j["limits"][0]]), np.array([j["limits"][1]]))
            joints[j["name"]] = jt
        else:
            raise ValueError(f"scene {scene['name']}: unsupported joint type {j['type']}")
    # Holonomic constraints (SapCouplerConstraint, SapWeldConstraint; near-rigid in Drake).
    for c in scene.get("couplers", []):
        plant.AddCouplerConstraint(joints[c["joint0"]], joints[c["joint1"]], c["gear_ratio"], c["offset"])
    for w in scene.get("welds", []):
        plant.AddWeldConstraint(bodies[w["body_A"]], drake_transform(w["X_AP"]), bodies[w["body_B"]],
                                drake_transform(w["X_BQ"]))
    geom_ids = {}
    for g in scene["geoms"]:
        props = ProximityProperties()
        m = g["material"]
        AddContactMaterial(dissipation=m.get("hunt_crossley_dissipation"), point_stiffness=m["point_contact_stiffness"],
                           friction=CoulombFriction(m["mu_static"], m["mu_dynamic"]), properties=props)
        props.AddProperty("material", "relaxation_time", m["relaxation_time"])
        if g["shape"] == "sphere":
            shape = Sphere(g["size"][0])
        elif g["shape"] == "halfspace":
            shape = HalfSpace()
        else:
            raise ValueError(f"scene {scene['name']}: unsupported shape {g['shape']}")
        geom_ids[g["name"]] = plant.RegisterCollisionGeometry(bodies[g["body"]], drake_transform(g["X_BG"]),
                                                              shape, g["name"], props)
    acts = {}
    for a in scene["actuators"]:
        act = plant.AddJointActuator(a["name"], joints[a["joint"]], effort_limit=a["effort_limit"])
        act.set_controller_gains(PdControllerGains(p=a["kp"], d=a["kd"]))
        acts[a["name"]] = act
    plant.Finalize()
    diagram = builder.Build()
    return diagram, plant, sg, bodies, joints, geom_ids, acts


def drake_initial_state(scene, plant, joints):
    import numpy as np
    q = np.zeros(plant.num_positions())
    v = np.zeros(plant.num_velocities())
    for j in scene["joints"]:
        s = scene["initial"][j["name"]]
        jt = joints[j["name"]]
        qi, vi = jt.position_start(), jt.velocity_start()
        if j["type"] == "free":
            q[qi:qi + 4] = s["quat_WB"]
            q[qi + 4:qi + 7] = s["p_WB"]
            v[vi:vi + 3] = s["w_WB"]
            v[vi + 3:vi + 6] = s["v_WB"]
        else:
            q[qi], v[vi] = s["q"], s["v"]
    return q, v


def fix_inputs(scene, plant, pc):
    """PD targets on the desired-state port, feed-forward on the actuation port."""
    import numpy as np
    if plant.num_actuators() == 0:
        return
    from pydrake.multibody.tree import JointActuatorIndex
    u = np.zeros(plant.num_actuated_dofs())
    by_name = {a["name"]: a for a in scene["actuators"]}
    xd = {}
    for i in range(plant.num_actuators()):
        act = plant.get_joint_actuator(JointActuatorIndex(i))
        a = by_name[act.name()]
        u[act.input_start()] = a["u_ff"]
        xd.setdefault(act.model_instance(), []).append((act.input_start(), a["q_target"], a["v_target"]))
    plant.get_actuation_input_port().FixValue(pc, u)
    for inst, rows in xd.items():
        rows.sort()
        plant.get_desired_state_input_port(inst).FixValue(
            pc, np.array([r[1] for r in rows] + [r[2] for r in rows]))


# ----------------------------------------------------------------------------------------------
# Our conventions: derived model description and state conversion.
# ----------------------------------------------------------------------------------------------
def ours_model(scene):
    """Our ModelBuilder view: body order = scene order (parents first), body_pos/quat at q = 0,
    joint anchor and axis in the child body frame (MuJoCo semantics)."""
    import numpy as np
    names = ["world"] + [b["name"] for b in scene["bodies"]]
    out_bodies, out_joints = [], []
    qadr = vadr = 0
    jby_child = {j["child"]: j for j in scene["joints"]}
    for b in scene["bodies"]:
        j = jby_child[b["name"]]
        entry = {"name": b["name"], "parent": names.index(j["parent"]), "mass": b["mass"], "com": b["com_B"],
                 "inertia": b["inertia_com_B"]}
        if j["type"] == "free":
            entry.update({"pos": [0.0, 0.0, 0.0], "quat": [1.0, 0.0, 0.0, 0.0]})
            out_joints.append({"name": j["name"], "body": names.index(b["name"]), "type": "free",
                               "pos": [0.0, 0.0, 0.0], "axis": [0.0, 0.0, 1.0], "qposadr": qadr, "dofadr": vadr})
            qadr += 7
            vadr += 6
        else:
            T_PF, T_CM = pose_mat(j["X_PF"]), pose_mat(j["X_CM"])
            T_PB0 = T_PF @ np.linalg.inv(T_CM)  # child frame in parent frame at q = 0
            p = mat_pose(T_PB0)
            entry.update({"pos": p["pos"], "quat": p["quat_wxyz"]})
            axis_B = T_CM[:3, :3] @ np.array(j["axis"])
            jj = {"name": j["name"], "body": names.index(b["name"]), "type": "hinge",
                  "pos": [float(x) for x in T_CM[:3, 3]], "axis": [float(x) for x in axis_B],
                  "qpos0": 0.0, "damping": j["damping"], "limited": bool(j.get("limits")),
                  "range": j["limits"] if j.get("limits") else [0.0, 0.0], "qposadr": qadr, "dofadr": vadr}
            out_joints.append(jj)
            qadr += 1
            vadr += 1
        out_bodies.append(entry)
    type_map = {"sphere": "sphere", "halfspace": "plane"}
    out_geoms = []
    for g in scene["geoms"]:
        m = g["material"]
        out_geoms.append({"name": g["name"], "body": names.index(g["body"]), "type": type_map[g["shape"]],
                          "pos": g["X_BG"]["pos"], "quat": g["X_BG"]["quat_wxyz"], "size": g["size"],
                          "friction": m["mu_dynamic"], "stiffness": m["point_contact_stiffness"],
                          "dissipation": m["relaxation_time"],
                          **({"hc_dissipation": m["hunt_crossley_dissipation"]}
                             if "hunt_crossley_dissipation" in m else {})})
    out_acts = []
    for a in scene["actuators"]:
        jn = [j["name"] for j in scene["joints"]].index(a["joint"])
        out_acts.append({"name": a["name"], "type": "pd", "joint": jn, "gear": 1.0, "kp": a["kp"], "kd": a["kd"],
                         "forcelimited": math.isfinite(a["effort_limit"]),
                         "forcerange": [-a["effort_limit"], a["effort_limit"]],
                         "ctrl": a["q_target"], "ctrl_vel": a["v_target"], "u_ff": a["u_ff"]})
    # Equalities as our EqualitySpec: coupler q0 - rho q1 - offset = 0 is the joint equality
    # q0 = offset + rho q1 (polycoef); weld frames P on body A, Q on body B in the body frames.
    jnames = [j["name"] for j in scene["joints"]]
    out_eqs = []
    for c in scene.get("couplers", []):
        out_eqs.append({"type": "joint", "obj1": jnames.index(c["joint0"]), "obj2": jnames.index(c["joint1"]),
                        "polycoef": [c["offset"], c["gear_ratio"], 0.0, 0.0, 0.0]})
    for w in scene.get("welds", []):
        out_eqs.append({"type": "weld", "obj1": names.index(w["body_A"]), "obj2": names.index(w["body_B"]),
                        "pos1": w["X_AP"]["pos"], "quat1": w["X_AP"]["quat_wxyz"],
                        "pos2": w["X_BQ"]["pos"], "quat2": w["X_BQ"]["quat_wxyz"]})
    return {"bodies": out_bodies, "joints": out_joints, "geoms": out_geoms, "actuators": out_acts,
            "equalities": out_eqs, "nq": qadr, "nv": vadr}


def ours_fk(ours, qpos):
    """World poses (4x4) of the bodies from our model description and qpos: X_W,child =
    X_W,parent * T(body_pos, body_quat) * [T(anchor) Rot(axis, q) T(-anchor)] for a hinge; a free
    joint sets the world pose directly (qpos = [p, quat])."""
    import numpy as np
    X = [np.eye(4)]
    for b, j in zip(ours["bodies"], ours["joints"]):
        a = j["qposadr"]
        if j["type"] == "free":
            T = pose_mat({"pos": qpos[a:a + 3], "quat_wxyz": qpos[a + 3:a + 7]})
        else:
            T0 = pose_mat({"pos": b["pos"], "quat_wxyz": b["quat"]})
            ax, th = np.array(j["axis"]), qpos[a]
            K = np.array([[0, -ax[2], ax[1]], [ax[2], 0, -ax[0]], [-ax[1], ax[0], 0]])
            Rj = np.eye(3) + math.sin(th) * K + (1 - math.cos(th)) * K @ K
            Tj = np.eye(4)
            Tj[:3, :3] = Rj
            Tj[:3, 3] = np.array(j["pos"]) - Rj @ np.array(j["pos"])
            T = X[b["parent"]] @ T0 @ Tj
        X.append(T)
    return X[1:]


def drake_to_ours(scene, joints, q, v):
    """Drake (q, v) -> our (qpos, qvel). Free: qpos = [p_WB, quat_WB normalised], qvel =
    [v_WBo world, R_WB^T w_WB]; revolute: unchanged (same sign: right-hand rotation about axis)."""
    import numpy as np
    qpos, qvel = [], []
    for j in scene["joints"]:
        jt = joints[j["name"]]
        qi, vi = jt.position_start(), jt.velocity_start()
        if j["type"] == "free":
            quat = np.array(q[qi:qi + 4])
            quat = quat / np.linalg.norm(quat)
            R = quat_to_mat(quat)
            qpos += list(q[qi + 4:qi + 7]) + list(quat)
            qvel += list(v[vi + 3:vi + 6]) + list(R.T @ np.array(v[vi:vi + 3]))
        else:
            qpos.append(q[qi])
            qvel.append(v[vi])
    return [float(x) for x in qpos], [float(x) for x in qvel]


# ----------------------------------------------------------------------------------------------
# Contact parameter combination (Drake's rules, verified by `probe`).
# ----------------------------------------------------------------------------------------------
def combine(ma, mb):
    ka, kb = ma["point_contact_stiffness"], mb["point_contact_stiffness"]
    mua, mub = ma["mu_dynamic"], mb["mu_dynamic"]
    out = {"k": ka * kb / (ka + kb), "tau_d": ma["relaxation_time"] + mb["relaxation_time"],
           "mu": 0.0 if mua + mub == 0 else 2 * mua * mub / (mua + mub)}
    if "hunt_crossley_dissipation" in ma and "hunt_crossley_dissipation" in mb:
        da, db = ma["hunt_crossley_dissipation"], mb["hunt_crossley_dissipation"]
        out["hc_d"] = (kb * da + ka * db) / (ka + kb)
    return out


# ----------------------------------------------------------------------------------------------
# Generation.
# ----------------------------------------------------------------------------------------------
def contact_record(c, gname, gindex):
    """Drake's PointPairContactInfo in our convention. Drake: nhat_BA_W points from B into A and
    f_Bc_W is the force on B's body. Ours: geom0 = the lower fixture index, the normal points
    geom0 -> geom1, force = force on geom1 (N; impulse = force * h), phi = -depth."""
    pp = c.point_pair()
    ia = gindex[gname[int(pp.id_A.get_value())]]
    ib = gindex[gname[int(pp.id_B.get_value())]]
    if ib < ia:
        g01, n, f = [ib, ia], pp.nhat_BA_W, -c.contact_force()
    else:
        g01, n, f = [ia, ib], -pp.nhat_BA_W, c.contact_force()
    return {"geoms": g01, "phi": float(-pp.depth), "normal": [float(x) for x in n],
            "point": [float(x) for x in c.contact_point()], "force": [float(x) for x in f]}


def run_scene(scene):
    """Returns (diagram, plant, ..., records). Record k holds state x_k and the contacts of the
    step x_k -> x_{k+1} (geometry at q_k, forces = impulses / h of that solve)."""
    diagram, plant, sg, bodies, joints, geom_ids, acts = build_drake(scene)
    ctx = diagram.CreateDefaultContext()
    pc = plant.GetMyMutableContextFromRoot(ctx)
    q0, v0 = drake_initial_state(scene, plant, joints)
    plant.SetPositions(pc, q0)
    plant.SetVelocities(pc, v0)
    fix_inputs(scene, plant, pc)
    gname = {int(gid.get_value()): n for n, gid in geom_ids.items()}
    gindex = {g["name"]: i for i, g in enumerate(scene["geoms"])}
    h = scene["time_step"]
    records = []
    for k in range(scene["num_steps"] + 1):
        q = plant.GetPositions(pc).copy()
        v = plant.GetVelocities(pc).copy()
        qpos, qvel = drake_to_ours(scene, joints, q, v)
        rec = {"k": k, "t": k * h, "q_drake": [float(x) for x in q], "v_drake": [float(x) for x in v],
               "qpos": qpos, "qvel": qvel, "contacts": []}
        # Contacts of the step leaving x_k (also for the last record, whose successor is not stored).
        cr = plant.get_contact_results_output_port().Eval(pc)
        for i in range(cr.num_point_pair_contacts()):
            rec["contacts"].append(contact_record(cr.point_pair_contact_info(i), gname, gindex))
        if k < scene["num_steps"]:
            nxt = plant.EvalUniquePeriodicDiscreteUpdate(pc).get_vector().CopyToVector()
            plant.SetPositionsAndVelocities(pc, nxt)
            ctx.SetTime((k + 1) * h)
        records.append(rec)
    return diagram, plant, sg, bodies, joints, geom_ids, acts, records


def fixture_for(scene, records, plant, joints, sg, geom_ids, cmdline):
    import importlib.metadata as md
    insp = sg.model_inspector()
    gname = {int(gid.get_value()): n for n, gid in geom_ids.items()}
    gindex = {g["name"]: i for i, g in enumerate(scene["geoms"])}
    pairs = sorted(sorted([gindex[gname[int(a.get_value())]], gindex[gname[int(b.get_value())]]])
                   for a, b in insp.GetCollisionCandidates())
    pair_params = []
    for a, b in pairs:
        c = combine(scene["geoms"][a]["material"], scene["geoms"][b]["material"])
        pair_params.append({"geoms": [a, b], **c})
    drake_joints = []
    for j in scene["joints"]:
        jt = joints[j["name"]]
        drake_joints.append({"name": j["name"], "drake_type": jt.type_name(),
                             "q_start": jt.position_start(), "num_q": jt.num_positions(),
                             "v_start": jt.velocity_start(), "num_v": jt.num_velocities()})
    # Near-rigid and PD clamp diagnostics that a test author may want to know about.
    fx = {
        "schema": SCHEMA,
        "name": scene["name"],
        "description": scene["description"],
        "generator": {"tool": "tools/drake_reference.py", "command": cmdline,
                      "drake_version": md.version("drake"), "python": platform.python_version()},
        "drake": {
            "time_step": scene["time_step"],
            "discrete_contact_approximation": scene.get("contact_approximation", "sap"), "contact_model": "point",
            "stiction_tolerance": DRAKE_STICTION_TOLERANCE,
            "sap_near_rigid_threshold": scene["near_rigid_threshold"],
            "use_sampled_output_ports": False,
            "sigma": DRAKE_SIGMA, "soft_norm_eps": DRAKE_SOFT_NORM_EPS,
            "solver_parameters": dict(DRAKE_SAP_DEFAULTS, settable_from_python=False),
            "limit_constraint": {"stiffness": DRAKE_LIMIT_STIFFNESS, "relaxation_time": "h",
                                 "near_rigid_threshold": DRAKE_LIMIT_BETA, "window_factor": DRAKE_LIMIT_WINDOW},
            "pd_constraint": {"near_rigid_threshold": DRAKE_PD_BETA},
            "combination": {"stiffness": "kA*kB/(kA+kB)", "relaxation_time": "tauA+tauB",
                            "friction": "2*muA*muB/(muA+muB) of the dynamic coefficients",
                            "contact_point": "(kA*pA + kB*pB)/(kA+kB), pX = witness point on geometry X",
                            "hunt_crossley_dissipation": "(kB*dA + kA*dB)/(kA+kB)"},
            "quaternion_renormalized": False,
            "q_names": list(plant.GetPositionNames(add_model_instance_prefix=False)),
            "v_names": list(plant.GetVelocityNames(add_model_instance_prefix=False)),
            "joints": drake_joints,
        },
        "model": {
            "gravity": scene["gravity"], "time_step": scene["time_step"],
            "near_rigid_threshold": scene["near_rigid_threshold"],
            "bodies": scene["bodies"], "joints": scene["joints"], "geoms": scene["geoms"],
            "actuators": scene["actuators"], "collision_pairs": pairs, "pair_parameters": pair_params,
            "couplers": scene.get("couplers", []), "welds": scene.get("welds", []),
            "initial": scene["initial"],
        },
        "ours": ours_model(scene),
        "num_steps": scene["num_steps"],
        "steps": records,
    }
    if "incline_deg" in scene:
        fx["model"]["incline_deg"] = scene["incline_deg"]
    return fx


def dump_json(obj, path):
    """JSON with floats as Python repr (shortest string that round-trips the IEEE double, i.e.
    full precision like %.17g but without trailing noise digits); one step per line."""
    def enc(o, indent):
        pad = "  " * indent
        if isinstance(o, float):
            if not math.isfinite(o):
                raise ValueError(f"non-finite value in fixture {path}")
            return repr(o)
        if isinstance(o, bool) or o is None or isinstance(o, (int, str)):
            return json.dumps(o)
        if isinstance(o, dict):
            if "k" in o and "q_drake" in o:  # one step per line keeps files diffable and compact
                return _compact(o)
            items = [f"{pad}  {json.dumps(k)}: {enc(v, indent + 1)}" for k, v in o.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}" if items else "{}"
        if isinstance(o, (list, tuple)):
            if all(not isinstance(x, (dict, list)) for x in o):
                return "[" + ", ".join(enc(x, 0) for x in o) + "]"
            items = [f"{pad}  {enc(x, indent + 1)}" for x in o]
            return "[\n" + ",\n".join(items) + "\n" + pad + "]" if items else "[]"
        raise TypeError(type(o))

    def _compact(o):
        if isinstance(o, float):
            return repr(o)
        if isinstance(o, dict):
            return "{" + ",".join(f"{json.dumps(k)}:{_compact(v)}" for k, v in o.items()) + "}"
        if isinstance(o, (list, tuple)):
            return "[" + ",".join(_compact(x) for x in o) + "]"
        return json.dumps(o)

    text = enc(obj, 0) + "\n"
    json.loads(text)  # self-check
    with open(path, "w") as f:
        f.write(text)
    return len(text)


def cmd_generate(args, argv):
    os.makedirs(args.out, exist_ok=True)
    scenes = [s for s in all_scenes() if not args.scene or s["name"] in args.scene]
    if args.scene and len(scenes) != len(args.scene):
        known = [s["name"] for s in all_scenes()]
        sys.exit(f"unknown scene in {args.scene}; known: {known}")
    cmdline = "python3 tools/drake_reference.py " + " ".join(argv)
    total = 0
    t_all = time.time()
    for s in scenes:
        t0 = time.time()
        _, plant, sg, _, joints, geom_ids, _, recs = run_scene(s)
        dt = time.time() - t0
        fx = fixture_for(s, recs, plant, joints, sg, geom_ids, cmdline)
        path = os.path.join(args.out, s["name"] + ".json")
        n = dump_json(fx, path)
        total += n
        print(f"{s['name']:20s} steps={s['num_steps']:4d} h={s['time_step']:g} beta={s['near_rigid_threshold']:g} "
              f"drake {dt:6.2f} s  {n / 1024:7.1f} KiB -> {os.path.relpath(path, REPO)}")
    print(f"total {total / 1024:.1f} KiB, {time.time() - t_all:.1f} s")


# ----------------------------------------------------------------------------------------------
# Independent numpy SAP (docs/sap-math.md §2-§7) on Drake's kinematics, for `verify` and `probe`.
# ----------------------------------------------------------------------------------------------
class Constraint:
    __slots__ = ("kind", "J", "R", "vhat", "mu", "pd", "info")

    def __init__(self, kind, J, R=None, vhat=None, mu=0.0, pd=None, info=None):
        self.kind, self.J, self.R, self.vhat, self.mu, self.pd, self.info = kind, J, R, vhat, mu, pd, info


def project(c, vc):
    """Returns (gamma, G, cost) of constraint c at constraint velocity vc."""
    import numpy as np
    if c.kind == "contact":
        Rt, Rn = c.R[0], c.R[2]
        mu = c.mu
        yt = -vc[:2] / Rt
        yn = (c.vhat[2] - vc[2]) / Rn
        yr = math.sqrt(yt @ yt + DRAKE_SOFT_NORM_EPS ** 2)
        that = yt / yr
        mut = mu * math.sqrt(Rt / Rn)
        muh = mu * Rt / Rn
        f = 1.0 / (1.0 + mut * mut)
        if yr <= mu * yn:
            g = np.array([yt[0], yt[1], yn])
            G = np.diag([1 / Rt, 1 / Rt, 1 / Rn])
        elif yn > -muh * yr:
            gn = f * (yn + muh * yr)
            gt = mu * gn * that
            g = np.array([gt[0], gt[1], gn])
            P = np.outer(that, that)
            Pp = np.eye(2) - P
            G = np.zeros((3, 3))
            G[:2, :2] = (mu / Rt) * ((gn / yr) * Pp + muh * f * P)
            G[:2, 2] = G[2, :2] = (mu * f / Rn) * that
            G[2, 2] = f / Rn
        else:
            g, G = np.zeros(3), np.zeros((3, 3))
        cost = 0.5 * (Rt * (g[:2] @ g[:2]) + Rn * g[2] ** 2)
        return g, G, cost
    if c.kind == "limit":
        y = (c.vhat - vc) / c.R
        g = np.maximum(0.0, y)
        G = np.diag(np.where(y > 0, 1.0 / c.R, 0.0))
        return g, G, 0.5 * float(c.R @ (g * g))
    if c.kind == "pd":
        kp, kd, e, q0, qd, vd, uff, h = c.pd
        y = -kp * (q0 + h * vc[0] - qd) - kd * (vc[0] - vd) + uff
        cc = h * kp + kd
        yc = min(max(y, -e), e)
        if abs(y) <= e:
            phi, Gs = 0.5 * y * y, h * cc
        elif y > e:
            phi, Gs = e * (y - e / 2), 0.0
        else:
            phi, Gs = -e * (y + e / 2), 0.0
        return np.array([h * yc]), np.array([[Gs]]), (h / cc) * phi
    raise ValueError(c.kind)


def sap_solve(A, vstar, cons, v0, tol=1e-13, max_it=100):
    """Newton on l(v) = 1/2 (v-v*)^T A (v-v*) + sum l_i(J_i v), exact line search on l'(alpha)."""
    import numpy as np

    def evaluate(v):
        grad = A @ (v - vstar)
        H = A.copy()
        cost = 0.5 * (v - vstar) @ A @ (v - vstar)
        gam = []
        for c in cons:
            g, G, lc = project(c, c.J @ v)
            grad -= c.J.T @ g
            H += c.J.T @ G @ c.J
            cost += lc
            gam.append(g)
        return cost, grad, H, gam

    def dcost(v, dv):
        d = dv @ A @ (v - vstar)
        for c in cons:
            g, _, _ = project(c, c.J @ v)
            d -= (c.J @ dv) @ g
        return d

    Dinv = 1.0 / np.sqrt(np.diag(A))
    v = v0.copy()
    it = 0
    for it in range(max_it):
        cost, grad, H, gam = evaluate(v)
        jtg = sum((c.J.T @ g for c, g in zip(cons, gam)), np.zeros_like(v))
        scale = max(np.linalg.norm(Dinv * (A @ v)), np.linalg.norm(Dinv * jtg))
        if np.linalg.norm(Dinv * grad) <= 1e-300 + tol * scale:
            break
        dv = -np.linalg.solve(H, grad)
        d0 = dcost(v, dv)
        if d0 >= 0:
            break  # round-off level
        lo, hi = 0.0, 1.5
        if dcost(v + hi * dv, dv) <= 0:
            alpha = hi
        else:
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if dcost(v + mid * dv, dv) < 0:
                    lo = mid
                else:
                    hi = mid
                if hi - lo < 1e-16:
                    break
            alpha = 0.5 * (lo + hi)
        v = v + alpha * dv
        if np.linalg.norm(alpha * dv) <= 1e-16 * max(1.0, np.linalg.norm(v)):
            break
    cost, grad, H, gam = evaluate(v)
    return v, gam, it


def tangent_basis(n):
    import numpy as np
    a = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(n, a)
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    return np.column_stack([t1, t2, n])  # R_WC: columns t1, t2, n


def geometry_contacts(scene, plant, pc, bodies):
    """Our own sphere/half-space and sphere/sphere geometry from the fixture description.
    Returns list of (g0, g1, phi, n_W (0->1), p0 (witness on g0), p1 (witness on g1))."""
    import numpy as np
    out = []
    X = {}
    for g in scene["geoms"]:
        T_WB = plant.EvalBodyPoseInWorld(pc, bodies[g["body"]]).GetAsMatrix4()
        X[g["name"]] = T_WB @ pose_mat(g["X_BG"])
    gi = {g["name"]: i for i, g in enumerate(scene["geoms"])}
    for a, b in scene["_pairs"]:
        ga, gb = scene["geoms"][a], scene["geoms"][b]
        if ga["shape"] == "sphere" and gb["shape"] == "halfspace":
            ga, gb = gb, ga
        if ga["shape"] == "halfspace" and gb["shape"] == "sphere":
            n = X[ga["name"]][:3, 2]
            o = X[ga["name"]][:3, 3]
            c = X[gb["name"]][:3, 3]
            r = gb["size"][0]
            dist = n @ (c - o)
            phi = dist - r
            out.append((gi[ga["name"]], gi[gb["name"]], phi, n, c - dist * n, c - r * n))
        elif ga["shape"] == "sphere" and gb["shape"] == "sphere":
            ca, cb = X[ga["name"]][:3, 3], X[gb["name"]][:3, 3]
            d = np.linalg.norm(cb - ca)
            n = (cb - ca) / d
            out.append((gi[ga["name"]], gi[gb["name"]], d - ga["size"][0] - gb["size"][0], n,
                        ca + ga["size"][0] * n, cb - gb["size"][0] * n))
        else:
            raise ValueError("pair not supported by the numpy replay")
    return out


def build_sap_problem(scene, plant, pc, bodies, joints):
    """A, v*, constraints at the context's state, following docs/sap-math.md §1-§5."""
    import numpy as np
    from pydrake.multibody.tree import JacobianWrtVariable
    h = scene["time_step"]
    beta = scene["near_rigid_threshold"]
    nv = plant.num_velocities()
    q = plant.GetPositions(pc)
    v = plant.GetVelocities(pc)
    M = plant.CalcMassMatrix(pc)
    Cv = plant.CalcBiasTerm(pc)
    tg = plant.CalcGravityGeneralizedForces(pc)
    D = np.zeros(nv)
    for j in scene["joints"]:
        if j["type"] != "free":
            D[joints[j["name"]].velocity_start()] = j["damping"]
    A = M + h * np.diag(D)
    vstar = v + h * np.linalg.solve(A, tg - Cv - D * v)
    diagA = np.diag(A)
    cons = []
    world = plant.world_frame()
    # Contacts.
    for g0, g1, phi, n, p0, p1 in geometry_contacts(scene, plant, pc, bodies):
        if phi >= 0:
            continue
        m0, m1 = scene["geoms"][g0]["material"], scene["geoms"][g1]["material"]
        prm = combine(m0, m1)
        k0, k1 = m0["point_contact_stiffness"], m1["point_contact_stiffness"]
        p = (k0 * p0 + k1 * p1) / (k0 + k1)
        RWC = tangent_basis(n)
        Jw = np.zeros((3, nv))
        for gi, sgn in ((g0, -1.0), (g1, 1.0)):
            body = bodies[scene["geoms"][gi]["body"]]
            if body.index() == plant.world_body().index():
                continue
            X_WB = plant.EvalBodyPoseInWorld(pc, body)
            p_B = X_WB.inverse().multiply(p)
            Jw += sgn * plant.CalcJacobianTranslationalVelocity(pc, JacobianWrtVariable.kV, body.body_frame(),
                                                                 p_B, world, world)
        J = RWC.T @ Jw
        W = J @ np.diag(1.0 / diagA) @ J.T
        w = np.linalg.norm(W) / 3.0
        Rn = max(beta * beta / (4 * math.pi ** 2) * w, 1.0 / (h * prm["k"] * (h + prm["tau_d"])))
        Rt = DRAKE_SIGMA * w
        vhat = np.array([0.0, 0.0, -phi / (h + prm["tau_d"])])
        cons.append(Constraint("contact", J, np.array([Rt, Rt, Rn]), vhat, prm["mu"],
                               info={"geoms": (g0, g1), "phi": phi, "n": n, "p": p, "RWC": RWC}))
    # Joint limits.
    for j in scene["joints"]:
        if j["type"] == "free" or not j.get("limits"):
            continue
        jt = joints[j["name"]]
        d = jt.velocity_start()
        q0 = q[jt.position_start()]
        dq = h * max(abs(v[d]), abs(vstar[d]))
        lo, hi = j["limits"]
        lo = lo if lo >= q0 - DRAKE_LIMIT_WINDOW * dq else -math.inf
        hi = hi if hi <= q0 + DRAKE_LIMIT_WINDOW * dq else math.inf
        rows, g0s = [], []
        if math.isfinite(lo):
            e = np.zeros(nv)
            e[d] = 1
            rows.append(e)
            g0s.append(q0 - lo)
        if math.isfinite(hi):
            e = np.zeros(nv)
            e[d] = -1
            rows.append(e)
            g0s.append(hi - q0)
        if not rows:
            continue
        w = 1.0 / A[d, d]
        Rc = 1.0 / (h * DRAKE_LIMIT_STIFFNESS * (h + h))
        R = np.full(len(rows), max(DRAKE_LIMIT_BETA ** 2 / (4 * math.pi ** 2) * w, Rc))
        cons.append(Constraint("limit", np.array(rows), R, -np.array(g0s) / (h + h), info={"joint": j["name"]}))
    # PD actuators.
    for a in scene["actuators"]:
        jt = joints[a["joint"]]
        d = jt.velocity_start()
        kp, kd = a["kp"], a["kd"]
        w = 1.0 / A[d, d]
        Rnr = DRAKE_PD_BETA ** 2 / (4 * math.pi ** 2) * w
        R = 1.0 / (h * (h * kp + kd))
        clamped = False
        if R < Rnr:
            clamped = True
            if h * kp > kd:
                tau = kd / kp
                kp = 1.0 / (h * (h + tau) * Rnr)
                kd = tau * kp
            else:
                rho = kp / kd
                kd = 1.0 / (h * (1 + h * rho) * Rnr)
                kp = rho * kd
        e = np.zeros((1, nv))
        e[0, d] = 1
        cons.append(Constraint("pd", e, pd=(kp, kd, a["effort_limit"], q[jt.position_start()], a["q_target"],
                                             a["v_target"], a["u_ff"], h), info={"clamped": clamped}))
    return A, vstar, cons, q, v


def quat_update(q, w_W, h, normalize_rate=False):
    """Drake's q_{n+1} = q_n + h * 1/2 Q(q_n) w (w in the parent/world frame)."""
    import numpy as np
    qw, qx, qy, qz = q
    Q = np.array([[-qx, -qy, -qz], [qw, qz, -qy], [-qz, qw, qx], [qy, -qx, qw]])
    if normalize_rate:
        Q = Q / np.linalg.norm(q)
    return np.asarray(q) + h * 0.5 * Q @ w_W


# ----------------------------------------------------------------------------------------------
# verify: sanity checks + numpy SAP replay of every fixture step.
# ----------------------------------------------------------------------------------------------
def load_fixture_scene(fx):
    m = fx["model"]
    return {"name": fx["name"], "time_step": m["time_step"], "near_rigid_threshold": m["near_rigid_threshold"],
            "gravity": m["gravity"], "bodies": m["bodies"], "joints": m["joints"], "geoms": m["geoms"],
            "actuators": m["actuators"], "initial": m["initial"], "num_steps": fx["num_steps"],
            "description": fx["description"], "_pairs": m["collision_pairs"],
            "couplers": m.get("couplers", []), "welds": m.get("welds", [])}


def replay(fx):
    """Rebuilds the scene from the fixture (only from the fixture's data), and for each recorded
    step k: sets Drake's state x_k, solves our numpy SAP, compares with x_{k+1} and the contact
    forces. Returns a dict of error figures."""
    import numpy as np
    scene = load_fixture_scene(fx)
    diagram, plant, sg, bodies, joints, geom_ids, acts = build_drake(scene)
    ctx = diagram.CreateDefaultContext()
    pc = plant.GetMyMutableContextFromRoot(ctx)
    fix_inputs(scene, plant, pc)
    h = scene["time_step"]
    steps = fx["steps"]
    stats = {"max_dv_abs": 0.0, "max_dv_rel": 0.0, "max_dq_abs": 0.0, "max_df_rel": 0.0,
             "max_momentum_residual_rel": 0.0, "contact_count_mismatch": 0, "max_point_err": 0.0,
             "max_phi_err": 0.0, "max_dq_abs_normalized_rate": 0.0, "limit_steps": 0, "pd_saturated_steps": 0,
             "pd_clamped_steps": 0, "nearrigid_contact_rows": 0, "contact_rows": 0, "max_newton_it": 0,
             "max_ours_conversion_err": 0.0, "max_ours_fk_err": 0.0}
    for k in range(len(steps) - 1):
        s, s1 = steps[k], steps[k + 1]
        plant.SetPositions(pc, np.array(s["q_drake"]))
        plant.SetVelocities(pc, np.array(s["v_drake"]))
        A, vstar, cons, q, v = build_sap_problem(scene, plant, pc, bodies, joints)
        vd = np.array(s1["v_drake"])
        vpy, gam, it = sap_solve(A, vstar, cons, v)
        stats["max_newton_it"] = max(stats["max_newton_it"], it)
        vscale = max(1.0, np.abs(vd).max())
        stats["max_dv_abs"] = max(stats["max_dv_abs"], float(np.abs(vpy - vd).max()))
        stats["max_dv_rel"] = max(stats["max_dv_rel"], float(np.abs(vpy - vd).max() / vscale))
        # Momentum balance with Drake's own v_{n+1} and Drake's reported contact forces.
        gen = A @ (vd - vstar)
        for c, g in zip(cons, gam):
            if c.kind != "contact":
                gen -= c.J.T @ g  # limits/PD from our replay (Drake does not report them)
        cons_c = [c for c in cons if c.kind == "contact"]
        dk = s["contacts"]
        if len(dk) != len(cons_c):
            stats["contact_count_mismatch"] += 1
        from pydrake.multibody.tree import JacobianWrtVariable
        for c in dk:
            g0, g1 = c["geoms"]
            f = np.array(c["force"]) * h  # impulse on geom1, world frame
            p = np.array(c["point"])
            for gi, sgn in ((g0, -1.0), (g1, 1.0)):
                body = bodies[scene["geoms"][gi]["body"]]
                if body.index() == plant.world_body().index():
                    continue
                p_B = plant.EvalBodyPoseInWorld(pc, body).inverse().multiply(p)
                Jb = plant.CalcJacobianTranslationalVelocity(pc, JacobianWrtVariable.kV, body.body_frame(), p_B,
                                                             plant.world_frame(), plant.world_frame())
                gen -= sgn * Jb.T @ f
        mscale = max(np.abs(A @ (vd - v)).max(), h * np.abs(A @ (vstar - v) / h).max(), 1e-12)
        stats["max_momentum_residual_rel"] = max(stats["max_momentum_residual_rel"], float(np.abs(gen).max() / mscale))
        # Contact forces: match by geometry pair.
        for c, g in zip(cons, gam):
            if c.kind == "contact":
                stats["contact_rows"] += 1
                if c.R[2] > 1.0 / (h * combine(scene["geoms"][c.info["geoms"][0]]["material"],
                                               scene["geoms"][c.info["geoms"][1]]["material"])["k"]
                                   * (h + combine(scene["geoms"][c.info["geoms"][0]]["material"],
                                                  scene["geoms"][c.info["geoms"][1]]["material"])["tau_d"])) * (1 + 1e-12):
                    stats["nearrigid_contact_rows"] += 1
                fpy = c.info["RWC"] @ g / h
                match = [d for d in dk if tuple(sorted(d["geoms"])) == tuple(sorted(c.info["geoms"]))]
                if match:
                    d = match[0]
                    sign = 1.0 if tuple(d["geoms"]) == tuple(c.info["geoms"]) else -1.0
                    fd = sign * np.array(d["force"])
                    fs = max(np.linalg.norm(fd), 1e-9)
                    stats["max_df_rel"] = max(stats["max_df_rel"], float(np.linalg.norm(fpy - fd) / max(fs, 1.0)))
                    stats["max_point_err"] = max(stats["max_point_err"],
                                                 float(np.linalg.norm(np.array(d["point"]) - c.info["p"])))
                    stats["max_phi_err"] = max(stats["max_phi_err"], abs(d["phi"] - c.info["phi"]))
            elif c.kind == "limit" and np.any(g > 0):
                stats["limit_steps"] += 1
            elif c.kind == "pd":
                stats["pd_clamped_steps"] += int(c.info["clamped"])
                kp, kd, e, q0, qd, vdes, uff, hh = c.pd
                if abs(g[0] / h) >= e * (1 - 1e-12):
                    stats["pd_saturated_steps"] += 1
        # Position update with Drake's v_{n+1}.
        q1 = np.array(s1["q_drake"])
        for j in scene["joints"]:
            jt = joints[j["name"]]
            qi, vi = jt.position_start(), jt.velocity_start()
            if j["type"] == "free":
                qq = quat_update(q[qi:qi + 4], vd[vi:vi + 3], h)
                qn = quat_update(q[qi:qi + 4], vd[vi:vi + 3], h, normalize_rate=True)
                pp = q[qi + 4:qi + 7] + h * vd[vi + 3:vi + 6]
                stats["max_dq_abs"] = max(stats["max_dq_abs"], float(np.abs(np.r_[qq, pp] - q1[qi:qi + 7]).max()))
                stats["max_dq_abs_normalized_rate"] = max(stats["max_dq_abs_normalized_rate"],
                                                          float(np.abs(np.r_[qn, pp] - q1[qi:qi + 7]).max()))
            else:
                stats["max_dq_abs"] = max(stats["max_dq_abs"], abs(q[qi] + h * vd[vi] - q1[qi]))
        # Our-convention record consistency, and our forward kinematics (fixture "ours" block,
        # MuJoCo semantics) against Drake's body poses.
        for b, X in zip(scene["bodies"], ours_fk(fx["ours"], s["qpos"])):
            X_d = plant.EvalBodyPoseInWorld(pc, bodies[b["name"]]).GetAsMatrix4()
            stats["max_ours_fk_err"] = max(stats["max_ours_fk_err"], float(np.abs(X - X_d).max()))
        qpos, qvel = drake_to_ours(scene, joints, s["q_drake"], s["v_drake"])
        stats["max_ours_conversion_err"] = max(stats["max_ours_conversion_err"],
                                               float(np.abs(np.array(qpos) - s["qpos"]).max()),
                                               float(np.abs(np.array(qvel) - s["qvel"]).max()))
    return stats


def sanity(fx):
    """Physics figures per scene (printed by verify)."""
    import numpy as np
    name = fx["name"]
    m = fx["model"]
    h = m["time_step"]
    steps = fx["steps"]
    g = -m["gravity"][2]
    out = {}
    pairs = {tuple(p["geoms"]): p for p in m["pair_parameters"]}
    if name == "sphere_drop":
        mass = m["bodies"][0]["mass"]
        k = pairs[(0, 1)]["k"]
        last = steps[-2]
        c = last["contacts"][0]
        # Linear momentum balance per step, exactly as the discrete scheme states it (M and the
        # bias at q_n): m[(v_o1 + w1 x r) - (v_o0 + w0 x r)] = h (m g + f) - h m w0 x (w0 x r),
        # r = R(q_n) com_B, Drake's v = [w_W, v_o].
        res = 0.0
        com = np.array(m["bodies"][0]["com_B"])
        for s0, s1 in zip(steps[:-1], steps[1:]):
            r = quat_to_mat(s0["q_drake"][:4]) @ com
            w0, w1 = np.array(s0["v_drake"][:3]), np.array(s1["v_drake"][:3])
            vo0, vo1 = np.array(s0["v_drake"][3:]), np.array(s1["v_drake"][3:])
            f = sum((np.array(cc["force"]) for cc in s0["contacts"]), np.zeros(3))
            lhs = mass * ((vo1 + np.cross(w1, r)) - (vo0 + np.cross(w0, r)))
            rhs = h * (mass * np.array(m["gravity"]) + f) - h * mass * np.cross(w0, np.cross(w0, r))
            res = max(res, float(np.abs(lhs - rhs).max()))
        out["resting_overlap"] = -c["phi"]
        out["m_g_over_k"] = mass * g / k
        out["overlap_rel_err"] = abs(-c["phi"] - mass * g / k) / (mass * g / k)
        out["normal_force_final_over_mg"] = c["force"][2] / (mass * g)
        out["max_linear_momentum_residual_Ns"] = res
        first = next(s["k"] for s in steps if s["contacts"])
        out["first_contact_t"] = first * h
        out["bounces"] = sum(1 for a, b in zip(steps[:-1], steps[1:]) if a["contacts"] and not b["contacts"])
        # Slip of the last state at Drake's contact point (stiffness-weighted between the witness
        # points, i.e. 0.75 of the overlap above the sphere's lowest point here).
        fin = steps[-1]
        R = quat_to_mat(fin["qpos"][3:7])
        w_W = R @ np.array(fin["qvel"][3:6])
        lever = np.array(fin["contacts"][0]["point"]) - np.array(fin["qpos"][:3])
        slip = np.array(fin["qvel"][:3]) + np.cross(w_W, lever)
        out["final_slip_at_contact_point_m_per_s"] = float(np.linalg.norm(slip[:2]))
    elif name == "box_slide":
        mu = pairs[(0, 1)]["mu"]
        v0 = np.array(steps[0]["qvel"][:3])
        p0 = np.array(steps[0]["qpos"][:3])
        stop = next((s for s in steps if np.linalg.norm(s["qvel"][:3]) < 1e-3), None)
        com = np.array(m["bodies"][0]["com_B"])
        pc0 = p0 + quat_to_mat(steps[0]["qpos"][3:7]) @ com
        pc1 = np.array(steps[-1]["qpos"][:3]) + quat_to_mat(steps[-1]["qpos"][3:7]) @ com
        vn = np.linalg.norm(v0[:2])
        out["mu_combined"] = mu
        out["stopping_distance"] = float(np.linalg.norm((pc1 - pc0)[:2]))
        out["v2_over_2mug"] = vn * vn / (2 * mu * g)
        out["stop_time"] = stop["t"] if stop else None
        out["v_over_mug"] = vn / (mu * g)
        out["final_speed"] = float(np.linalg.norm(steps[-1]["qvel"][:3]))
        # friction/normal ratio while sliding
        ratios = []
        for s in steps[5:100]:
            F = sum((np.array(c["force"]) for c in s["contacts"]), np.zeros(3))
            if F[2] > 0:
                ratios.append(np.linalg.norm(F[:2]) / F[2])
        if ratios:
            out["friction_over_normal_sliding"] = [float(min(ratios)), float(max(ratios))]
    elif name.startswith("box_incline"):
        th = math.radians(m["incline_deg"])
        mu = pairs[(0, 1)]["mu"]
        xg = quat_to_mat(m["geoms"][0]["X_BG"]["quat_wxyz"])[:, 0]
        vs = [float(np.array(s["qvel"][:3]) @ xg) for s in steps]
        t = np.array([s["t"] for s in steps])
        out["tan_theta"] = math.tan(th)
        out["mu_combined"] = mu
        if math.tan(th) < mu:
            out["max_downhill_speed_after_settle"] = float(max(abs(x) for x in vs[50:]))
            out["downhill_displacement"] = float((np.array(steps[-1]["qpos"][:3]) - steps[0]["qpos"][:3]) @ xg)
        else:
            a_fit = np.polyfit(t[50:], vs[50:], 1)[0]
            out["downhill_acceleration_fit"] = float(a_fit)
            out["g_sin_minus_mu_cos"] = g * (math.sin(th) - mu * math.cos(th))
            out["accel_rel_err"] = abs(a_fit - out["g_sin_minus_mu_cos"]) / out["g_sin_minus_mu_cos"]
    elif name == "arm_limits":
        lim = [j["limits"] for j in m["joints"]]
        qmax = [max(s["qpos"][i] for s in steps) for i in range(2)]
        qmin = [min(s["qpos"][i] for s in steps) for i in range(2)]
        out["q_range_seen"] = [[qmin[i], qmax[i]] for i in range(2)]
        out["limits"] = lim
        out["max_limit_violation"] = max(max(qmax[i] - lim[i][1], lim[i][0] - qmin[i]) for i in range(2))
        out["contact_steps"] = sum(1 for s in steps if s["contacts"])
        out["first_contact_t"] = next((s["t"] for s in steps if s["contacts"]), None)
    elif name == "pd_effort":
        a = m["actuators"][0]
        out["q_final"] = steps[-1]["qpos"][0]
        out["q_target"] = a["q_target"]
    return out


VERIFY_LIMITS = {"max_dv_rel": 1e-5, "contact_count_mismatch": 0, "max_dq_abs": 1e-12, "max_point_err": 1e-12,
                 "max_phi_err": 1e-12, "max_ours_conversion_err": 1e-12, "max_ours_fk_err": 1e-12}


def cmd_verify(args):
    import glob
    files = sorted(glob.glob(os.path.join(args.out, "*.json")))
    if not files:
        sys.exit(f"no fixtures in {args.out}; run generate first")
    worst = 0.0
    failures = []
    for path in files:
        with open(path) as f:
            fx = json.load(f)
        if fx.get("schema") != SCHEMA:
            continue
        if fx["drake"]["discrete_contact_approximation"] != "sap":
            # The numpy replay implements SAP's cone only; Hunt-Crossley fixtures are checked by
            # the C++ fidelity test (tests/test_drake_fidelity.cpp) alone.
            print(f"== {fx['name']}: {fx['drake']['discrete_contact_approximation']} approximation, not replayed")
            continue
        if fx["model"].get("couplers") or fx["model"].get("welds"):
            print(f"== {fx['name']}  skipped: the numpy replay has no coupler/weld rows "
                  "(tests/test_drake_fidelity.cpp compares the drake preset directly)")
            continue
        t0 = time.time()
        st = replay(fx)
        san = sanity(fx)
        worst = max(worst, st["max_dv_rel"])
        for key, lim in VERIFY_LIMITS.items():
            if st[key] > lim:
                failures.append(f"{fx['name']}: {key} = {st[key]:.3g} > {lim:g}")
        print(f"== {fx['name']}  ({time.time() - t0:.1f} s)")
        print("   replay: " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in st.items()))
        print("   sanity: " + json.dumps(san, default=float))
    print(f"worst relative velocity mismatch (numpy SAP vs Drake): {worst:.3g}")
    if failures:
        sys.exit("verify FAILED:\n  " + "\n  ".join(failures))
    print("verify passed (limits: v rel 1e-5 = 10x Drake's rel tolerance; geometry, kinematics 1e-12)")


# ----------------------------------------------------------------------------------------------
# probe: one-step experiments that pin Drake's combination rules and constants.
# ----------------------------------------------------------------------------------------------
def _probe_scene(k_a, tau_a, mu_a, k_b, tau_b, mu_b, beta=0.0, h=1e-3, z=None, vz=-0.5, vx=0.0,
                 mus_a=None, mus_b=None):
    r = 0.05
    mass = 0.8
    return {"name": "probe", "time_step": h, "num_steps": 1, "near_rigid_threshold": beta,
            "gravity": [0.0, 0.0, -9.81], "description": "probe",
            "bodies": [{"name": "ball", "mass": mass, "com_B": [0.0, 0.0, 0.0],
                        "inertia_com_B": [8e-4, 8e-4, 8e-4, 0.0, 0.0, 0.0]}],
            "joints": [{"name": "ball_free", "type": "free", "parent": "world", "child": "ball"}],
            "geoms": [{"name": "ground", "body": "world", "shape": "halfspace", "size": [0.0, 0.0, 0.0], "X_BG": pose(),
                       "material": material(k_b, tau_b, mu_b, mus_b)},
                      {"name": "ball_geom", "body": "ball", "shape": "sphere", "size": [r, 0.0, 0.0], "X_BG": pose(),
                       "material": material(k_a, tau_a, mu_a, mus_a)}],
            "actuators": [],
            "initial": {"ball_free": {"p_WB": [0.0, 0.0, r - 0.002 if z is None else z],
                                      "quat_WB": [1.0, 0.0, 0.0, 0.0], "v_WB": [vx, 0.0, vz],
                                      "w_WB": [0.0, 0.0, 0.0]}}}


def _records(scene):
    return run_scene(scene)[-1]


def cmd_probe(args):
    """Each probe prints what the formula predicts and what Drake produced."""
    import numpy as np
    g = 9.81
    print("Probe 1: relaxation-time combination from one step of a sphere pressed into the ground")
    print("  (no friction load, beta = 0): m (v - v*) = h k (-phi0 - (h + tau) v) solved for tau.")
    for ta, tb in [(0.01, 0.03), (0.02, 0.0), (0.0, 0.05), (0.005, 0.005)]:
        s = _probe_scene(1e5, ta, 0.5, 3e5, tb, 0.5)
        recs = _records(s)
        h, m = s["time_step"], s["bodies"][0]["mass"]
        k = 1e5 * 3e5 / 4e5
        phi0 = recs[0]["contacts"][0]["phi"]
        v0 = recs[0]["v_drake"][5]
        v1 = recs[1]["v_drake"][5]
        vstar = v0 - h * g
        tau = (-phi0 - m * (v1 - vstar) / (h * k)) / v1 - h
        print(f"  tau_A={ta:<6g} tau_B={tb:<6g}: inferred tau = {tau:.9g}  (tau_A + tau_B = {ta + tb:g})")
    print("Probe 2: stiffness combination and contact point from a resting sphere (beta = 0)")
    for ka, kb in [(1e5, 3e5), (2e4, 2e4), (5e5, 1e4)]:
        keff = ka * kb / (ka + kb)
        s = _probe_scene(ka, 0.02, 0.5, kb, 0.02, 0.5, z=0.05 - 0.8 * g / keff, vz=0.0)
        s["num_steps"] = 1
        recs = _records(s)
        c = recs[0]["contacts"][0]
        f = c["force"][2]
        phi = c["phi"]
        # point: witness on sphere at z = phi (bottom), on ground at 0; predicted weights kA, kB
        pred = (ka * phi + kb * 0.0) / (ka + kb)
        v1 = recs[1]["v_drake"][5]
        print(f"  kA={ka:g} kB={kb:g}: k_eff from force = {f / (-phi + (s['time_step'] + 0.04) * v1):.9g} "
              f"(kA kB/(kA+kB) = {keff:.9g}); contact point z = {c['point'][2]:.6e} "
              f"(kA-weighted prediction {pred:.6e}, midpoint {phi / 2:.6e})")
    print("Probe 3: friction combination and static vs dynamic coefficient (sliding sphere)")
    for (ma, msa), (mb, msb) in [((0.3, 0.3), (0.9, 0.9)), ((0.3, 0.9), (0.3, 0.9)), ((0.2, 0.25), (0.6, 0.7))]:
        s = _probe_scene(1e5, 0.01, ma, 1e5, 0.01, mb, z=0.05 - 0.8 * g / 5e4, vz=0.0, vx=1.0, mus_a=msa, mus_b=msb)
        recs = _records(s)
        c = recs[0]["contacts"][0]
        ratio = math.hypot(c["force"][0], c["force"][1]) / c["force"][2]
        print(f"  mu_dyn=({ma},{mb}) mu_static=({msa},{msb}): |f_t|/f_n = {ratio:.9g} "
              f"(2 mu_dA mu_dB/(sum) = {2 * ma * mb / (ma + mb):.9g})")
    print("Probe 4: near-rigid floor (beta = 1, stiff contact): numpy SAP vs Drake one step")
    for beta in (1.0, 0.5, 0.0):
        s = _probe_scene(1e9, 1e-4, 0.5, 1e9, 1e-4, 0.5, beta=beta, z=0.0499, vz=-0.2, vx=0.3)
        s["_pairs"] = [[0, 1]]
        diagram, plant, sg, bodies, joints, geom_ids, acts, recs = run_scene(s)
        pc = plant.CreateDefaultContext()
        plant.SetPositions(pc, np.array(recs[0]["q_drake"]))
        plant.SetVelocities(pc, np.array(recs[0]["v_drake"]))
        # geometry queries need the diagram context; rebuild with one
        ctx = diagram.CreateDefaultContext()
        pc = plant.GetMyMutableContextFromRoot(ctx)
        plant.SetPositions(pc, np.array(recs[0]["q_drake"]))
        plant.SetVelocities(pc, np.array(recs[0]["v_drake"]))
        A, vstar, cons, q, v = build_sap_problem(s, plant, pc, bodies, joints)
        vpy, gam, _ = sap_solve(A, vstar, cons, v)
        s0 = dict(s, near_rigid_threshold=0.0)
        A0, vs0, cons0, _, _ = build_sap_problem(s0, plant, pc, bodies, joints)
        v0py, _, _ = sap_solve(A0, vs0, cons0, v)
        print(f"  beta={beta}: Drake v_z={recs[1]['v_drake'][5]:.10g}  numpy(beta)={vpy[5]:.10g}  "
              f"numpy(beta=0)={v0py[5]:.10g}  R_n={cons[0].R[2]:.4g} (compliant {1 / (1e-3 * 5e8 * 1.2e-3):.4g})")
    print("Probe 5: joint-limit constraint constants (k = 1e12, tau = h, beta = 0.1, window 2) and")
    print("         PD near-rigid clamp (beta = 0.1): numpy SAP vs Drake, one step")
    base = scene_pd_effort()
    for label, kp, kd, lim, q0, v0 in [("limit hit", 0.0, 0.0, [-0.5, 0.9], 0.899, 2.0),
                                       ("limit outside window", 0.0, 0.0, [-0.5, 1.0], 0.899, 2.0),
                                       ("PD soft", 60.0, 4.0, None, 0.9, 0.0),
                                       ("PD clamped (Kp h > Kd)", 1e9, 1e3, None, 0.9, 0.0),
                                       ("PD clamped (Kd only)", 0.0, 1e7, None, 0.9, 1.0)]:
        s = json.loads(json.dumps(base))
        s["joints"][0]["limits"] = lim
        s["initial"]["hinge"] = {"q": q0, "v": v0}
        s["time_step"] = 1e-3
        if kp == 0 and kd == 0:
            s["actuators"] = []
        else:
            s["actuators"][0].update({"kp": kp, "kd": kd, "effort_limit": 1e6})
        s["_pairs"] = []
        s["num_steps"] = 1
        diagram, plant, sg, bodies, joints, geom_ids, acts, recs = run_scene(s)
        ctx = diagram.CreateDefaultContext()
        pc = plant.GetMyMutableContextFromRoot(ctx)
        fix_inputs(s, plant, pc)
        plant.SetPositions(pc, np.array(recs[0]["q_drake"]))
        plant.SetVelocities(pc, np.array(recs[0]["v_drake"]))
        A, vstar, cons, q, v = build_sap_problem(s, plant, pc, bodies, joints)
        vpy, gam, _ = sap_solve(A, vstar, cons, v)
        extra = ""
        for c in cons:
            if c.kind == "pd":
                extra = f" clamped={c.info['clamped']}"
            if c.kind == "limit":
                extra = f" R={c.R[0]:.4g} (compliant {1 / (1e-3 * 1e12 * 2e-3):.3g})"
        print(f"  {label:26s}: Drake v1={recs[1]['v_drake'][0]:.12g} numpy={vpy[0]:.12g} v*={vstar[0]:.6g}{extra}")
    print("Probe 6: quaternion normalisation (free body spinning at |w| = 20 rad/s, no contact)")
    s = _probe_scene(1e5, 0.01, 0.5, 1e5, 0.01, 0.5, z=1.0, vz=0.0)
    s["initial"]["ball_free"]["w_WB"] = [0.0, 12.0, 16.0]
    s["num_steps"] = 100
    recs = _records(s)
    norms = [float(np.linalg.norm(r["q_drake"][:4])) for r in recs]
    print(f"  |q| after 1, 10, 100 steps: {norms[1]:.12f} {norms[10]:.12f} {norms[100]:.12f}  "
          f"(sqrt(1+(h|w|/2)^2)^n predicts {math.sqrt(1 + (1e-3 * 20 / 2) ** 2) ** 100:.12f} at n=100)")
    print("Probe 7: sampled vs unsampled output ports (contact results pairing with the Simulator)")
    from pydrake.all import Simulator
    s = scene_sphere_drop()
    s["num_steps"] = 60
    _, _, _, _, _, _, _, recs = run_scene(s)
    diagram, plant, sg, bodies, joints, geom_ids, acts = build_drake(s, use_sampled_output_ports=True)
    sim = Simulator(diagram)
    ctx = sim.get_mutable_context()
    pc = plant.GetMyMutableContextFromRoot(ctx)
    q0, v0 = drake_initial_state(s, plant, joints)
    plant.SetPositions(pc, q0)
    plant.SetVelocities(pc, v0)
    sim.Initialize()
    maxd, maxf = 0.0, 0.0
    for k in range(1, 61):
        sim.AdvanceTo(k * s["time_step"])
        maxd = max(maxd, float(np.abs(plant.GetPositions(pc) - recs[k]["q_drake"]).max()))
        cr = plant.get_contact_results_output_port().Eval(pc)
        gname = {int(gid.get_value()): n for n, gid in geom_ids.items()}
        gindex = {g["name"]: i for i, g in enumerate(s["geoms"])}
        got = [contact_record(cr.point_pair_contact_info(i), gname, gindex)
               for i in range(cr.num_point_pair_contacts())]
        if len(got) != len(recs[k - 1]["contacts"]):
            maxf = math.inf
        for a, b in zip(got, recs[k - 1]["contacts"]):
            maxf = max(maxf, float(np.abs(np.array(a["force"]) - b["force"]).max()))
    print(f"  Simulator vs manual stepping: max |dq| = {maxd:.3g}; sampled contact force at t_k vs "
          f"manual record k-1: max diff = {maxf:.3g} N")


def main():
    argv = sys.argv[1:]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="run the scenes and write the fixtures")
    g.add_argument("--scene", action="append", help="scene name (repeatable); default: all")
    g.add_argument("--out", default=DEFAULT_OUT)
    v = sub.add_parser("verify", help="numpy-SAP replay and physics sanity checks of the fixtures")
    v.add_argument("--out", default=DEFAULT_OUT)
    sub.add_parser("probe", help="one-step experiments on Drake's combination rules and constants")
    sub.add_parser("setup", help="create .venv-drake and install drake only")
    args = ap.parse_args(argv)
    if args.cmd == "setup":
        print(setup_venv())
        return
    ensure_drake(argv)
    import logging
    logging.getLogger("drake").setLevel(logging.ERROR)  # half-space deformable-contact notice
    import warnings
    warnings.filterwarnings("ignore")
    if args.cmd == "generate":
        cmd_generate(args, argv)
    elif args.cmd == "verify":
        cmd_verify(args)
    elif args.cmd == "probe":
        cmd_probe(args)


if __name__ == "__main__":
    main()
