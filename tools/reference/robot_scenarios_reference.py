#!/usr/bin/env python3
"""MuJoCo's answer to the two gymnasium-robotics scenarios of tests/test_robot_scenarios.cpp.

Issue 18: "the Shadow hand (manipulate_block) holds its block in the palm for 2 s; Fetch
pick_and_place's table and object rest without drifting". The scenarios reproduce the gym
environments' resets (gymnasium_robotics 1.4.2, read from the wheel):

  hand  (envs/shadow_dexterous_hand/manipulate.py, MujocoManipulateEnv._reset_sim): qpos0 of the
        file (no initial_qpos, no keyframe), the block's free joint at its body pose (1, 0.87,
        0.2), zero action, i.e. ctrl at the middle of each actuator's ctrlrange
        (hand_env.py: ctrl = center + action * range). The env lets it settle for 10 x 20
        substeps (0.4 s); we then hold 2 s more (2.4 s in all, 1,200 steps of 2 ms).
  fetch (envs/fetch/pick_and_place.py and fetch_env.py, _env_setup): base slides 0.405, 0.48,
        0; object0 at x, y = 1.25, 0.53 of the env's initial_qpos, z = 0.425, resting on the
        table top (the env writes z = 0.4, the table top, half embedding the block, and reads
        back height_offset after its settling steps: 0.425 less the contact's penetration).
        The mocap body that the gripper is welded to moves with the base (the env's
        reset_mocap_welds + set_mocap_pos keep the weld satisfied); the fingers get ctrl 0 as
        in the file. 2 s (1,000 steps).

"fetch_solimp_0.5" repeats the Fetch run with every solimp set to d = 0.5 (docs/robots.md: our
contact compression and part of the weld sag match it). Writes tests/data/mujoco/robot_scenarios.json: per scenario, the watched bodies' world
positions at the sampled times, and MuJoCo's contact count at the end. The test reads the
fixture, never the wheel's MuJoCo.

    ~/.cache/sap-robot-corpus/venv/bin/python tools/reference/robot_scenarios_reference.py
    (the venv and the unpacked wheel come from tools/checks/robot_corpus.py)
"""
import json
import os
from pathlib import Path

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("SAP_ROBOT_CORPUS_CACHE", Path.home() / ".cache" / "sap-robot-corpus"))
ASSETS = CACHE / "unpacked" / "gymnasium-robotics" / "gymnasium_robotics" / "envs" / "assets"


def run(m, d, bodies, times):
    out = {}
    steps = {int(round(t / m.opt.timestep)): t for t in times}
    mujoco.mj_forward(m, d)
    out["0"] = {b: d.body(b).xpos.tolist() for b in bodies}
    for k in range(1, max(steps) + 1):
        mujoco.mj_step(m, d)
        if k in steps:
            out["%g" % steps[k]] = {b: d.body(b).xpos.tolist() for b in bodies}
    return out, int(d.ncon)


def hand():
    m = mujoco.MjModel.from_xml_path(str(ASSETS / "hand" / "manipulate_block.xml"))
    d = mujoco.MjData(m)
    d.ctrl[:] = m.actuator_ctrlrange.mean(axis=1)
    pos, ncon = run(m, d, ["object", "robot0:palm"], [0.4, 1.4, 2.4])
    return {"model": "hand/manipulate_block.xml", "dt": m.opt.timestep, "ctrl": d.ctrl.tolist(), "positions": pos,
            "ncon_end": ncon}


def fetch(solimp_half=False):
    m = mujoco.MjModel.from_xml_path(str(ASSETS / "fetch" / "pick_and_place.xml"))
    if solimp_half:  # impedance d = 0.5 everywhere: the compliance our importer's solref rule gives
        m.eq_solimp[:, :3] = (0.5, 0.5, 0.001)
        m.geom_solimp[:, :3] = (0.5, 0.5, 0.001)
    d = mujoco.MjData(m)
    slides = {"robot0:slide0": 0.405, "robot0:slide1": 0.48, "robot0:slide2": 0.0}
    for j, v in slides.items():
        d.qpos[m.joint(j).qposadr[0]] = v
    a = m.joint("object0:joint").qposadr[0]
    d.qpos[a:a + 7] = [1.25, 0.53, 0.425, 1, 0, 0, 0]
    d.mocap_pos[0] += [0.405, 0.48, 0.0]
    pos, ncon = run(m, d, ["object0", "table0", "robot0:gripper_link"], [1.0, 2.0])
    return {"model": "fetch/pick_and_place.xml", "dt": m.opt.timestep, "slides": slides, "positions": pos,
            "ncon_end": ncon}


def main():
    out = {"mujoco": mujoco.__version__, "hand": hand(), "fetch": fetch(), "fetch_solimp_0.5": fetch(True)}
    path = REPO / "tests" / "data" / "mujoco" / "robot_scenarios.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    for k in ("hand", "fetch", "fetch_solimp_0.5"):
        p = out[k]["positions"]
        print(k, {t: {b: np.round(v, 4).tolist() for b, v in p[t].items()} for t in p})
    print("wrote", path)


if __name__ == "__main__":
    main()
