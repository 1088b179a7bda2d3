#!/usr/bin/env python3
"""Write MuJoCo reference values for the MJCF importer tests (tests/test_mjcf_fixtures.cpp).

Debian's MuJoCo (2.2.2, used by tests/oracle/test_mujoco_oracle.cpp) cannot read the newer
models (Unitree G1, Franka Panda of models/). This tool loads them with the PyPI `mujoco` package and
stores, per model, the compiled constants that the importer must reproduce and the kinematics
and dynamics at a few random (q, v): body poses and centers of mass, the joint-space mass
matrix (mj_fullM of qM, armature included) and the bias forces qfrc_bias = C(q, v) v + g(q).

Setup (the venv is git-ignored):
    python3 -m venv .venv-mujoco && .venv-mujoco/bin/pip install mujoco numpy
Run from the repository root:
    .venv-mujoco/bin/python tools/reference/mujoco_reference.py            # all models
    .venv-mujoco/bin/python tools/reference/mujoco_reference.py --only g1  # one model

Models in ACTUATED also store a random ctrl per sample and MuJoCo's qfrc_actuator there.

The vendored models carry no mesh geoms (models/*/SOURCE.md). Should a model name mesh files
that are not shipped, its mesh geoms are deleted before compiling; the tool checks that each
deleted geom is visual-only (contype = conaffinity = 0) and massless (density 0, or the body has
an explicit inertial), so the dynamics are unchanged.
"""

import argparse
import json
import os
import sys

import mujoco
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name -> (model path relative to the repository root, number of random states, seed)
MODELS = {
    "unitree_g1": ("models/unitree_g1/scene_flat.xml", 3, 11),
    "franka_panda": ("models/franka_emika_panda/mjx_single_cube.xml", 3, 12),
    "features_mj3": ("tests/data/mujoco/features_mj3.xml", 3, 13),
    "affine_actuators": ("tests/data/mujoco/affine_actuators.xml", 8, 14),
}
# Models whose samples also carry a random ctrl and MuJoCo's qfrc_actuator (drawn from a second
# generator, so that the states of the other models' fixtures do not change).
ACTUATED = {"affine_actuators"}


def load_without_meshes(path):
    spec = mujoco.MjSpec.from_file(path)
    for g in list(spec.geoms):
        if g.type != mujoco.mjtGeom.mjGEOM_MESH:
            continue
        if g.contype != 0 or g.conaffinity != 0:
            sys.exit(f"{path}: mesh geom '{g.name}' collides; cannot drop it")
        body = g.parent
        explicit = body.explicitinertial if hasattr(body, "explicitinertial") else body.mass > 0
        if g.density != 0 and not explicit:
            sys.exit(f"{path}: mesh geom '{g.name}' contributes mass; cannot drop it")
        spec.delete(g)
    for mesh in list(spec.meshes):
        spec.delete(mesh)
    return spec.compile()


def random_state(m, rng):
    q = np.zeros(m.nq)
    v = rng.standard_normal(m.nv)
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        t = m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            q[a:a + 3] = rng.uniform(-1, 1, 3)
            w = rng.standard_normal(4)
            q[a + 3:a + 7] = w / np.linalg.norm(w)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            w = rng.standard_normal(4)
            q[a:a + 4] = w / np.linalg.norm(w)
        else:
            q[a] = rng.uniform(-1, 1)
    return q, v


def full_mass_matrix(m, d, M):
    """Dense M (armature included); the signature changed in MuJoCo 4."""
    if hasattr(d, "qM"):
        mujoco.mj_fullM(m, M, d.qM)
    else:
        mujoco.mj_fullM(m, d, M)


def inertia_tensor(m, b):
    """Body inertia about the com in body axes, from MuJoCo's principal moments and frame."""
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, m.body_iquat[b])
    R = R.reshape(3, 3)
    I = R @ np.diag(m.body_inertia[b]) @ R.T
    return [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]


def random_ctrl(m, rng):
    """Controls within and beyond ctrlrange (half a range width either side), N(0, 1) when unlimited."""
    c = rng.standard_normal(m.nu)
    for u in range(m.nu):
        if m.actuator_ctrllimited[u]:
            lo, hi = m.actuator_ctrlrange[u]
            c[u] = rng.uniform(lo - 0.5 * (hi - lo), hi + 0.5 * (hi - lo))
    return c


def floats(a):
    return [float(x) for x in np.asarray(a).ravel()]


def reference(name, rel_path, samples, seed):
    path = os.path.join(REPO, rel_path)
    m = load_without_meshes(path)
    d = mujoco.MjData(m)
    out = {
        "model": rel_path,
        "mujoco_version": mujoco.__version__,
        "nq": m.nq, "nv": m.nv, "nbody": m.nbody, "njnt": m.njnt, "nu": m.nu,
        "timestep": m.opt.timestep,
        "gravity": floats(m.opt.gravity),
        "body_names": [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or "" for b in range(m.nbody)],
        "body_parentid": [int(x) for x in m.body_parentid],
        "body_mass": floats(m.body_mass),
        "body_ipos": floats(m.body_ipos),
        "body_inertia_full": [inertia_tensor(m, b) for b in range(m.nbody)],
        "jnt_names": [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or "" for j in range(m.njnt)],
        "jnt_type": [int(x) for x in m.jnt_type],
        "jnt_limited": [int(x) for x in m.jnt_limited],
        "jnt_range": floats(m.jnt_range),
        "jnt_stiffness": floats(m.jnt_stiffness),
        "qpos0": floats(m.qpos0),
        "qpos_spring": floats(m.qpos_spring),
        "dof_armature": floats(m.dof_armature),
        "dof_damping": floats(m.dof_damping[:, 0] if np.ndim(m.dof_damping) > 1 else m.dof_damping),
        "actuator_names": [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, u) or "" for u in range(m.nu)],
        "actuator_trnid": [int(m.actuator_trnid[u, 0]) for u in range(m.nu)],
        "actuator_gear": [float(m.actuator_gear[u, 0]) for u in range(m.nu)],
        "actuator_gainprm0": [float(m.actuator_gainprm[u, 0]) for u in range(m.nu)],
        "actuator_biasprm": [floats(m.actuator_biasprm[u, :3]) for u in range(m.nu)],
        "actuator_biastype": [int(x) for x in m.actuator_biastype],
        "actuator_ctrllimited": [int(x) for x in m.actuator_ctrllimited],
        "actuator_ctrlrange": floats(m.actuator_ctrlrange),
        "actuator_forcelimited": [int(x) for x in m.actuator_forcelimited],
        "actuator_forcerange": floats(m.actuator_forcerange),
        "keys": [{"name": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_KEY, k) or "",
                  "qpos": floats(m.key_qpos[k]), "ctrl": floats(m.key_ctrl[k])} for k in range(m.nkey)],
        "samples": [],
    }
    rng = np.random.default_rng(seed)
    ctrl_rng = np.random.default_rng(seed + 1000) if name in ACTUATED else None
    M = np.zeros((m.nv, m.nv))
    for _ in range(samples):
        q, v = random_state(m, rng)
        d.qpos[:] = q
        d.qvel[:] = v
        if ctrl_rng is not None:
            d.ctrl[:] = random_ctrl(m, ctrl_rng)
        mujoco.mj_forward(m, d)
        full_mass_matrix(m, d, M)
        lower = [M[i, j] for i in range(m.nv) for j in range(i + 1)]
        out["samples"].append({
            "qpos": floats(q), "qvel": floats(v),
            "xpos": floats(d.xpos), "xquat": floats(d.xquat), "xipos": floats(d.xipos),
            "M_lower": floats(lower),  # row-major lower triangle
            "qfrc_bias": floats(d.qfrc_bias),
        })
        if ctrl_rng is not None:
            out["samples"][-1]["ctrl"] = floats(d.ctrl)
            out["samples"][-1]["qfrc_actuator"] = floats(d.qfrc_actuator)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "data", "mujoco"))
    ap.add_argument("--only", default=None, help="substring of a model name")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, (rel, samples, seed) in MODELS.items():
        if args.only and args.only not in name:
            continue
        ref = reference(name, rel, samples, seed)
        dst = os.path.join(args.out, name + ".json")
        with open(dst, "w") as f:
            json.dump(ref, f, separators=(",", ":"))
            f.write("\n")
        print(f"{dst}: nq={ref['nq']} nv={ref['nv']} nbody={ref['nbody']} samples={samples} "
              f"({os.path.getsize(dst)} bytes, MuJoCo {ref['mujoco_version']})")


if __name__ == "__main__":
    main()
