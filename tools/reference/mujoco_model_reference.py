#!/usr/bin/env python3
"""MuJoCo reference values for the rest of MuJoCo's rigid-body model (issue 30).

Loads the oracle models of tests/data/mujoco/ with the PyPI `mujoco` package and writes, per
model, MuJoCo's compiled constants and its values at random states (fixed seeds) as JSON next
to the model, for the C++ tests (tests/test_spatial_tendon.cpp, test_actuator_dynamics.cpp,
test_fluid_forces.cpp, test_passive_forces.cpp):

  spatial_tendons     ten_length, ten_moment (dense, nv per tendon) and the path points
                      (wrap_xpos) at random (q): site paths, sphere and cylinder wrapping with
                      and without sidesite (and inside), pulleys, every joint type on a path
  tendon_coupling     ten_length, ten_moment, the tendon equality residuals (efc_pos of the
                      equality rows), tendon limits, frictionloss and armature (qM with the
                      tendon armature J^T a J)
  actuator_dynamics   act_dot, actuator_length / velocity / force, qfrc_actuator and the next
                      activation (one mj_step's act) at random (q, v, act, ctrl): dyntype filter,
                      filterexact, integrator, muscle; actlimited/actrange, actearly;
                      MuJoCo's muscle gain and bias (lengthrange, acc0 stored)
  passive_step        one mj_step (implicitfast) from random (q, v, ctrl) of a contact-free
                      model with every passive force and force range our importer supports:
                      qvel, qpos after it (and qfrc_passive / qfrc_actuator of its start)
  passive_forces      qfrc_spring, qfrc_damper, qfrc_gravcomp, qfrc_actuator at random
                      (q, v, ctrl): joint springdamper (compiled stiffness/damping and the
                      dof_invweight0 they come from), springref, ball and free joint springs,
                      gravcomp with and without actuatorgravcomp, joint actuatorfrcrange,
                      actuator forcerange, tendon actuatorfrcrange and spring deadband
  fluid_forces        qfrc_fluid at random (q, v): inertia-box and ellipsoid models (geom_fluid
                      stored: the compiler's virtual mass and inertia), density, viscosity, wind
  muscle_arm          a 1 s trajectory (qpos, qvel, act every 10 steps) of a muscle-driven arm
                      under periodic controls ctrl_i(t) = 0.5 + 0.5 sin(2 pi f t + phase_i)
  swimmer_gait        gymnasium-robotics' swimmer (from its wheel) under a travelling wave for
                      10 s, in its fluid and in vacuum: the centre of mass every 0.5 s

Setup (any venv; git-ignored): python3 -m venv V && V/bin/pip install mujoco==3.3.7 numpy
Run from the repository root:  V/bin/python tools/reference/mujoco_model_reference.py [--only NAME]
"""

import argparse
import json
import os
import sys

import mujoco
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mujoco_reference import floats, full_mass_matrix, random_ctrl  # noqa: E402

DATA = os.path.join(REPO, "tests", "data", "mujoco")
# Muscle arm controls: frequency (Hz) and the phase of each actuator.
ARM_FREQ = 1.5
ARM_PHASE = [0.0, np.pi, 1.0, 2.5]


def names(m, obj, n):
    return [mujoco.mj_id2name(m, obj, i) or "" for i in range(n)]


def random_qpos(m, rng, spread=1.0):
    """qpos0 moved: hinge/slide by U(-spread, spread), free positions by U(-0.2, 0.2), random
    unit quaternions for ball and free joints."""
    q = m.qpos0.copy()
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        t = m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            q[a:a + 3] += rng.uniform(-0.2, 0.2, 3)
            w = rng.standard_normal(4)
            q[a + 3:a + 7] = w / np.linalg.norm(w)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            w = rng.standard_normal(4)
            q[a:a + 4] = w / np.linalg.norm(w)
        else:
            q[a] += rng.uniform(-spread, spread)
    return q


def dense_moment(m, d):
    """ten_moment as an (ntendon, nv) array (MuJoCo keeps it sparse for sparse models)."""
    J = np.zeros((m.ntendon, m.nv))
    if mujoco.mj_isSparse(m):
        mujoco.mju_sparse2dense(J, d.ten_J.reshape(-1), d.ten_J_rownnz, d.ten_J_rowadr, d.ten_J_colind.reshape(-1))
    else:
        J[:] = np.asarray(d.ten_J).reshape(m.ntendon, m.nv)
    return J


def model_constants(m):
    """What the C++ tests need of the compiled model that our importer does not (yet) give."""
    return {
        "mujoco_version": mujoco.__version__,
        "nq": m.nq, "nv": m.nv, "nbody": m.nbody, "njnt": m.njnt, "nu": m.nu, "na": m.na,
        "ntendon": m.ntendon, "nsite": m.nsite, "ngeom": m.ngeom,
        "timestep": m.opt.timestep,
        "gravity": floats(m.opt.gravity),
        "body_names": names(m, mujoco.mjtObj.mjOBJ_BODY, m.nbody),
        "body_mass": floats(m.body_mass),
        "body_ipos": floats(m.body_ipos),
        "body_iquat": floats(m.body_iquat),
        "body_inertia": floats(m.body_inertia),  # principal moments in the body_iquat frame
        "body_gravcomp": floats(m.body_gravcomp),
        "jnt_names": names(m, mujoco.mjtObj.mjOBJ_JOINT, m.njnt),
        "jnt_type": [int(x) for x in m.jnt_type],
        "qpos0": floats(m.qpos0),
        "site_names": names(m, mujoco.mjtObj.mjOBJ_SITE, m.nsite),
        "site_bodyid": [int(x) for x in m.site_bodyid],
        "site_pos": floats(m.site_pos),
        "geom_names": names(m, mujoco.mjtObj.mjOBJ_GEOM, m.ngeom),
        "geom_bodyid": [int(x) for x in m.geom_bodyid],
        "geom_type": [int(x) for x in m.geom_type],
        "geom_pos": floats(m.geom_pos),
        "geom_quat": floats(m.geom_quat),
        "geom_size": floats(m.geom_size),
        "tendon_names": names(m, mujoco.mjtObj.mjOBJ_TENDON, m.ntendon),
        "tendon_adr": [int(x) for x in m.tendon_adr],
        "tendon_num": [int(x) for x in m.tendon_num],
        "tendon_length0": floats(m.tendon_length0),
        "wrap_type": [int(x) for x in m.wrap_type],
        "wrap_objid": [int(x) for x in m.wrap_objid],
        "wrap_prm": floats(m.wrap_prm),
    }


def actuator_constants(m):
    return {
        "actuator_names": names(m, mujoco.mjtObj.mjOBJ_ACTUATOR, m.nu),
        "actuator_trntype": [int(x) for x in m.actuator_trntype],
        "actuator_trnid": [int(m.actuator_trnid[u, 0]) for u in range(m.nu)],
        "actuator_gear": [float(m.actuator_gear[u, 0]) for u in range(m.nu)],
        "actuator_dyntype": [int(x) for x in m.actuator_dyntype],
        "actuator_dynprm": [floats(m.actuator_dynprm[u, :3]) for u in range(m.nu)],
        "actuator_gaintype": [int(x) for x in m.actuator_gaintype],
        "actuator_gainprm": [floats(m.actuator_gainprm[u, :9]) for u in range(m.nu)],
        "actuator_biastype": [int(x) for x in m.actuator_biastype],
        "actuator_biasprm": [floats(m.actuator_biasprm[u, :9]) for u in range(m.nu)],
        "actuator_ctrllimited": [int(x) for x in m.actuator_ctrllimited],
        "actuator_ctrlrange": floats(m.actuator_ctrlrange),
        "actuator_forcelimited": [int(x) for x in m.actuator_forcelimited],
        "actuator_forcerange": floats(m.actuator_forcerange),
        "actuator_actlimited": [int(x) for x in m.actuator_actlimited],
        "actuator_actrange": floats(m.actuator_actrange),
        "actuator_actearly": [int(x) for x in m.actuator_actearly],
        "actuator_actadr": [int(x) for x in m.actuator_actadr],
        "actuator_lengthrange": floats(m.actuator_lengthrange),
        "actuator_acc0": floats(m.actuator_acc0),
    }


def random_act(m, rng):
    """Activations within actrange when limited, else U(-0.5, 1.3) (muscles beyond [0, 1] too)."""
    act = np.zeros(m.na)
    for u in range(m.nu):
        a = m.actuator_actadr[u]
        if a < 0:
            continue
        if m.actuator_actlimited[u]:
            lo, hi = m.actuator_actrange[u]
            act[a] = rng.uniform(lo, hi)
        else:
            act[a] = rng.uniform(-0.5, 1.3)
    return act


def spatial_tendons(m, d, rng, samples):
    out = []
    for _ in range(samples):
        d.qpos[:] = random_qpos(m, rng)
        d.qvel[:] = 0
        mujoco.mj_forward(m, d)
        out.append({
            "qpos": floats(d.qpos),
            "ten_length": floats(d.ten_length),
            "ten_moment": floats(dense_moment(m, d)),
            "ten_wrapadr": [int(x) for x in d.ten_wrapadr],
            "ten_wrapnum": [int(x) for x in d.ten_wrapnum],
            "wrap_obj": [int(x) for x in np.ravel(d.wrap_obj)[:int(np.sum(d.ten_wrapnum))]],
            "wrap_xpos": floats(d.wrap_xpos[:int(np.sum(d.ten_wrapnum))]),
        })
    return out


def tendon_coupling(m, d, rng, samples):
    out = []
    M = np.zeros((m.nv, m.nv))
    for _ in range(samples):
        d.qpos[:] = random_qpos(m, rng, spread=0.5)
        d.qvel[:] = rng.standard_normal(m.nv)
        mujoco.mj_forward(m, d)
        full_mass_matrix(m, d, M)
        eq_rows = [i for i in range(d.nefc) if d.efc_type[i] == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
        out.append({
            "qpos": floats(d.qpos), "qvel": floats(d.qvel),
            "ten_length": floats(d.ten_length),
            "ten_velocity": floats(d.ten_velocity),
            "ten_moment": floats(dense_moment(m, d)),
            "eq_id": [int(d.efc_id[i]) for i in eq_rows],
            "eq_pos": [float(d.efc_pos[i]) for i in eq_rows],
            "M": floats(M),
        })
    return out


def actuator_dynamics(m, d, rng, samples):
    out = []
    for _ in range(samples):
        mujoco.mj_resetData(m, d)
        q = random_qpos(m, rng, spread=0.8)
        v = rng.standard_normal(m.nv)
        act = random_act(m, rng)
        ctrl = random_ctrl(m, rng)
        for u in range(m.nu):  # muscles: controls beyond [0, 1] too
            if m.actuator_dyntype[u] == mujoco.mjtDyn.mjDYN_MUSCLE:
                ctrl[u] = rng.uniform(-0.2, 1.2)
        d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = q, v, act, ctrl
        mujoco.mj_forward(m, d)
        sample = {
            "qpos": floats(q), "qvel": floats(v), "act": floats(act), "ctrl": floats(ctrl),
            "act_dot": floats(d.act_dot),
            "actuator_length": floats(d.actuator_length),
            "actuator_velocity": floats(d.actuator_velocity),
            "actuator_force": floats(d.actuator_force),
            "qfrc_actuator": floats(d.qfrc_actuator),
            "ten_length": floats(d.ten_length),
        }
        mujoco.mj_step(m, d)  # the activation after one step (Euler or exact filter, clamped)
        sample["act_next"] = floats(d.act)
        out.append(sample)
    return out


def passive_forces(m, d, rng, samples):
    out = []
    for _ in range(samples):
        d.qpos[:] = random_qpos(m, rng, spread=1.0)
        d.qvel[:] = rng.standard_normal(m.nv)
        d.ctrl[:] = random_ctrl(m, rng) * 3  # well beyond the force ranges
        mujoco.mj_forward(m, d)
        out.append({
            "qpos": floats(d.qpos), "qvel": floats(d.qvel), "ctrl": floats(d.ctrl),
            "qfrc_spring": floats(d.qfrc_spring),
            "qfrc_damper": floats(d.qfrc_damper),
            "qfrc_gravcomp": floats(d.qfrc_gravcomp),
            "qfrc_passive": floats(d.qfrc_passive),
            "qfrc_actuator": floats(d.qfrc_actuator),
            "actuator_force": floats(d.actuator_force),
            "ten_length": floats(d.ten_length),
            "ten_velocity": floats(d.ten_velocity),
        })
    return out


def fluid_forces(m, d, rng, samples):
    out = []
    for _ in range(samples):
        d.qpos[:] = random_qpos(m, rng, spread=1.0)
        d.qvel[:] = rng.standard_normal(m.nv) * 2
        mujoco.mj_forward(m, d)
        out.append({
            "qpos": floats(d.qpos), "qvel": floats(d.qvel),
            "qfrc_fluid": floats(d.qfrc_fluid),
            "xipos": floats(d.xipos), "ximat": floats(d.ximat),
        })
    return out


def passive_step(m, d, rng, samples):
    """One mj_step (implicitfast) from random (q, v, ctrl): qvel and qpos after it, and the
    forces of its start."""
    out = []
    for _ in range(samples):
        mujoco.mj_resetData(m, d)
        d.qpos[:] = random_qpos(m, rng, spread=0.6)
        d.qvel[:] = rng.standard_normal(m.nv)
        d.ctrl[:] = random_ctrl(m, rng) * 3  # beyond the force ranges
        q, v, c = floats(d.qpos), floats(d.qvel), floats(d.ctrl)
        mujoco.mj_forward(m, d)
        forces = {"qfrc_passive": floats(d.qfrc_passive), "qfrc_actuator": floats(d.qfrc_actuator),
                  "qfrc_gravcomp": floats(d.qfrc_gravcomp), "ten_length": floats(d.ten_length)}
        mujoco.mj_step(m, d)
        out.append({"qpos": q, "qvel": v, "ctrl": c, **forces,
                    "qpos_next": floats(d.qpos), "qvel_next": floats(d.qvel)})
    return out


def muscle_arm(m, d, rng, samples):
    """One trajectory from rest at qpos0: every 10th step's time, qpos, qvel, act over 1 s."""
    del rng, samples
    mujoco.mj_resetData(m, d)
    traj = []
    steps = int(round(1.0 / m.opt.timestep))
    phase = np.array(ARM_PHASE[:m.nu])
    for k in range(steps + 1):
        if k % 10 == 0:
            traj.append({"time": float(d.time), "qpos": floats(d.qpos), "qvel": floats(d.qvel), "act": floats(d.act),
                         "ten_length": floats(d.ten_length)})
        if k == steps:
            break
        d.ctrl[:] = 0.5 + 0.5 * np.sin(2 * np.pi * ARM_FREQ * d.time + phase)
        mujoco.mj_step(m, d)
    return traj


def swimmer_gait(m, d, rng, samples):
    """gymnasium's swimmer under a travelling wave ctrl = (sin 2 pi f t, sin(2 pi f t - pi/2)),
    f = SWIMMER_FREQ, from rest for 10 s, in its fluid and in vacuum (density = viscosity = 0):
    the centre of mass every 0.5 s."""
    del rng, samples
    out = []
    for fluid in (True, False):
        if not fluid:
            m.opt.density = 0
            m.opt.viscosity = 0
        mujoco.mj_resetData(m, d)
        com = []
        for k in range(int(round(10 / m.opt.timestep)) + 1):
            if k % int(round(0.5 / m.opt.timestep)) == 0:
                mujoco.mj_forward(m, d)
                com.append(floats(d.subtree_com[1]))
            t = d.time
            d.ctrl[:] = [np.sin(2 * np.pi * SWIMMER_FREQ * t), np.sin(2 * np.pi * SWIMMER_FREQ * t - np.pi / 2)]
            mujoco.mj_step(m, d)
        out.append({"fluid": fluid, "subtree_com": com})
    return out


SWIMMER_FREQ = 0.5


def gym_swimmer_path():
    import importlib.util
    spec = importlib.util.find_spec("gymnasium_robotics")
    if spec is None:
        sys.exit("swimmer_gait needs gymnasium-robotics in this Python (pip install gymnasium-robotics==1.4.2)")
    return os.path.join(list(spec.submodule_search_locations)[0], "envs", "mujoco", "assets", "swimmer.xml")


# name -> (sampler, number of samples, seed, extra constants)
FIXTURES = {
    "spatial_tendons": (spatial_tendons, 40, 301, None),
    "tendon_coupling": (tendon_coupling, 12, 302, None),
    "actuator_dynamics": (actuator_dynamics, 30, 303, actuator_constants),
    "passive_forces": (passive_forces, 12, 304, actuator_constants),
    "fluid_forces": (fluid_forces, 20, 305, None),
    "passive_step": (passive_step, 8, 308, actuator_constants),
    "muscle_arm": (muscle_arm, 0, 306, actuator_constants),
    "swimmer_gait": (swimmer_gait, 0, 307, None),
}
# Fixtures whose model is not in the repository (a PyPI wheel's): name -> path function and
# the path recorded (relative to the wheel's package).
EXTERNAL = {"swimmer_gait": (gym_swimmer_path, "gymnasium_robotics/envs/mujoco/assets/swimmer.xml")}


def compiled_extra(name, m):
    """Constants of one fixture beyond model_constants (the compiler's derived values)."""
    if name == "passive_forces":
        return {
            "jnt_stiffness": floats(m.jnt_stiffness),
            "dof_damping": floats(m.dof_damping),
            "dof_invweight0": floats(m.dof_invweight0),
            "qpos_spring": floats(m.qpos_spring),
            "jnt_actfrclimited": [int(x) for x in m.jnt_actfrclimited],
            "jnt_actfrcrange": floats(m.jnt_actfrcrange),
            "jnt_actgravcomp": [int(x) for x in m.jnt_actgravcomp],
            "tendon_lengthspring": floats(m.tendon_lengthspring),
            "tendon_stiffness": floats(m.tendon_stiffness),
            "tendon_damping": floats(m.tendon_damping),
            "tendon_actfrclimited": [int(x) for x in m.tendon_actfrclimited],
            "tendon_actfrcrange": floats(m.tendon_actfrcrange),
        }
    if name == "fluid_forces":
        return {"density": float(m.opt.density), "viscosity": float(m.opt.viscosity), "wind": floats(m.opt.wind),
                "geom_fluid": floats(m.geom_fluid)}
    if name == "tendon_coupling":
        return {
            "tendon_limited": [int(x) for x in m.tendon_limited], "tendon_range": floats(m.tendon_range),
            "tendon_frictionloss": floats(m.tendon_frictionloss), "tendon_armature": floats(m.tendon_armature),
            "eq_type": [int(x) for x in m.eq_type], "eq_obj1id": [int(x) for x in m.eq_obj1id],
            "eq_obj2id": [int(x) for x in m.eq_obj2id], "eq_data": [floats(m.eq_data[e, :5]) for e in range(m.neq)],
        }
    if name == "muscle_arm":
        return {"arm_freq": ARM_FREQ, "arm_phase": ARM_PHASE[:m.nu], "dof_damping": floats(m.dof_damping),
                "dof_armature": floats(m.dof_armature)}
    return {}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=None, help="substring of a fixture name")
    args = ap.parse_args()
    for name, (sampler, samples, seed, extra) in FIXTURES.items():
        if args.only and args.only not in name:
            continue
        if name in EXTERNAL:
            path, rel = EXTERNAL[name][0](), EXTERNAL[name][1]
        else:
            rel = os.path.join("tests", "data", "mujoco", name + ".xml")
            path = os.path.join(REPO, rel)
        m = mujoco.MjModel.from_xml_path(path)
        d = mujoco.MjData(m)
        ref = {"model": rel}
        ref.update(model_constants(m))
        if extra:
            ref.update(extra(m))
        ref.update(compiled_extra(name, m))
        ref["samples"] = sampler(m, d, np.random.default_rng(seed), samples)
        dst = os.path.join(DATA, name + ".json")
        with open(dst, "w") as f:
            json.dump(ref, f, separators=(",", ":"))
            f.write("\n")
        print(f"{dst}: nq={m.nq} nv={m.nv} samples={len(ref['samples'])} "
              f"({os.path.getsize(dst)} bytes, MuJoCo {mujoco.__version__})")


if __name__ == "__main__":
    main()
