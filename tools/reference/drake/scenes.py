"""The reference scenes, as plain data (everything a fixture needs to be rebuilt elsewhere)."""
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
from .rotations import *  # noqa: F401,F403


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
