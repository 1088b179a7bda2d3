#!/usr/bin/env python3
"""MuJoCo oracle for joint dry friction (issue 18): a hinge about z with frictionloss f under a
constant applied torque tau, stepped by MuJoCo; writes tests/data/mujoco/frictionloss_hinge.json
(the MJCF text, and qvel after each of the first 500 steps for several tau), which
tests/test_frictionloss.cpp compares with our import and solver.

    ~/.cache/sap-robot-corpus/venv/bin/python tools/reference/frictionloss_reference.py   # any python with mujoco
"""
import json
from pathlib import Path

import mujoco

XML = """<mujoco>
  <option timestep="0.001" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="wheel">
      <joint name="axle" type="hinge" axis="0 0 1" frictionloss="1.5"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.5 0.5 0.2"/>
    </body>
  </worldbody>
</mujoco>
"""


def main():
    m = mujoco.MjModel.from_xml_string(XML)
    runs = []
    for tau in (0.9, 3.75, -1.8):
        d = mujoco.MjData(m)
        qvel = []
        for _ in range(500):
            d.qfrc_applied[0] = tau
            mujoco.mj_step(m, d)
            qvel.append(float(d.qvel[0]))
        runs.append({"tau": tau, "qvel": qvel})
    out = Path(__file__).resolve().parents[2] / "tests" / "data" / "mujoco" / "frictionloss_hinge.json"
    out.write_text(json.dumps({"mujoco_version": mujoco.__version__, "xml": XML, "frictionloss": 1.5,
                               "inertia": 0.2, "timestep": 0.001, "runs": runs}, indent=1) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
