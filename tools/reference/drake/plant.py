"""Drake's MultibodyPlant of a scene, and Drake's rules for combining contact parameters."""
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
