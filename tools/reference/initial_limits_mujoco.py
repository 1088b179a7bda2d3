#!/usr/bin/env python3
"""MuJoCo's trajectory from an initial state outside the joint limits (issue 29 item 6).

Steps tests/data/initial_limits_folded_arm.xml (qpos0 = 0 lies 0.8, 1.1 and 1.1 rad outside the
ranges of j2, j3, j5) from qpos0 with MuJoCo's Python package and writes the limited joints'
angles at a few times, and the largest joint speed, to tests/data/initial_limits_mujoco.json
(read by tests/test_initial_limits.cpp).

  python tools/reference/initial_limits_mujoco.py   (a Python with mujoco 4.0.0)
"""
import json
from pathlib import Path

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[2]
MODEL = "tests/data/initial_limits_folded_arm.xml"
TIMES = [0.05, 0.1, 0.2, 0.5, 1.0]


def main():
    m = mujoco.MjModel.from_xml_path(str(REPO / MODEL))
    d = mujoco.MjData(m)
    limited = [j for j in range(m.njnt) if m.jnt_limited[j]]
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in limited]
    out = {"model": MODEL, "mujoco": mujoco.__version__, "timestep": float(m.opt.timestep),
           "joints": names, "range": [[float(x) for x in m.jnt_range[j]] for j in limited],
           "qpos0": [float(m.qpos0[m.jnt_qposadr[j]]) for j in limited], "samples": []}
    max_speed = 0.0
    steps = {round(t / m.opt.timestep): t for t in TIMES}
    for k in range(1, max(steps) + 1):
        mujoco.mj_step(m, d)
        max_speed = max(max_speed, float(np.abs(d.qvel).max()))
        if k in steps:
            out["samples"].append({"time": steps[k], "q": [float(d.qpos[m.jnt_qposadr[j]]) for j in limited],
                                   "finite": bool(np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all())})
    out["max_joint_speed"] = max_speed
    path = REPO / "tests/data/initial_limits_mujoco.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
