"""probe: one-step experiments that pin Drake's combination rules and constants."""
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
from .numpy_sap import *  # noqa: F401,F403
from .generate import *  # noqa: F401,F403
from .verify import *  # noqa: F401,F403


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
