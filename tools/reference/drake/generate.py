"""generate: run the scenes in Drake and write the fixtures."""
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
        "generator": {"tool": "tools/reference/drake_reference.py", "command": cmdline,
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
    cmdline = "python3 tools/reference/drake_reference.py " + " ".join(argv)
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
