"""Our conventions: the model description derived from a scene, state conversion from Drake's."""
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
from .scenes import *  # noqa: F401,F403
from .plant import *  # noqa: F401,F403


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
