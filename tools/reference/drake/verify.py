"""verify: sanity checks and a numpy-SAP replay of every fixture step."""
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
