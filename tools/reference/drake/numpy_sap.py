"""An independent numpy SAP (docs/sap-math.md §2-§7) on Drake's kinematics, for verify and probe."""
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
from .ours import *  # noqa: F401,F403


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
