#!/usr/bin/env python3
"""MuJoCo oracle for the <option><flag> switches the MJCF importer implements at import time
(equality, frictionloss, clampctrl, constraint) and for a site's fromto: small models stepped by
MuJoCo with the flag enabled and disabled; writes tests/data/mujoco/option_flags.json (the MJCF
text of each run, its control, and qpos after `steps` steps; for the site, MuJoCo's site_pos),
which tests/test_mjcf_flags.cpp compares with our import and solver.

    /path/to/python-with-mujoco tools/reference/option_flags_reference.py
"""
import json
from pathlib import Path

import mujoco

# A weld holds a free box at 1 m (its point at the box's centre); disabled, it falls.
WELD = """<mujoco>
  <option timestep="0.002" gravity="0 0 -9.81">{flag}</option>
  <worldbody>
    <body name="box" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
  </worldbody>
  <equality><weld body1="world" body2="box"/></equality>
</mujoco>"""

# Dry friction (100 N) holds a 1 kg slider against gravity; disabled, it falls.
FRICTION = """<mujoco>
  <option timestep="0.002" gravity="0 0 -9.81">{flag}</option>
  <worldbody>
    <body name="slider"><joint name="z" type="slide" axis="0 0 1" frictionloss="100"/>
      <geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
</mujoco>"""

# A motor with ctrlrange [-1, 1] driven by ctrl 5 in zero gravity: 1 N clamped, 5 N unclamped.
CLAMP = """<mujoco>
  <option timestep="0.002" gravity="0 0 0">{flag}</option>
  <worldbody>
    <body name="cart"><joint name="x" type="slide" axis="1 0 0"/><geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
  <actuator><motor joint="x" ctrlrange="-1 1"/></actuator>
</mujoco>"""

# Every kind of constraint at once: a floor under a slider with a limit, dry friction and a
# joint equality pinning it; constraint="disable" removes them all (free fall).
CONSTRAINT = """<mujoco>
  <option timestep="0.002" gravity="0 0 -9.81">{flag}</option>
  <worldbody>
    <geom type="plane" size="1 1 0.1"/>
    <body name="slider" pos="0 0 0.5"><joint name="z" type="slide" axis="0 0 1" range="-0.1 1" frictionloss="2"/>
      <geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
  <equality><joint joint1="z"/></equality>
</mujoco>"""

SITE = """<mujoco>
  <worldbody>
    <body name="b" pos="0 0 1"><joint type="hinge" axis="0 1 0"/><geom size="0.1"/>
      <site name="s" type="capsule" size="0.01" euler="0 0 1" fromto="0.1 0.2 0.3 0.5 -0.2 0.1"/></body>
  </worldbody>
</mujoco>"""


def run(xml, ctrl, steps):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.ctrl[:] = ctrl
    for _ in range(steps):
        mujoco.mj_step(m, d)
    return [float(x) for x in d.qpos]


def main():
    cases = []
    for name, xml, flag, ctrl in [("weld", WELD, "equality", []), ("frictionloss", FRICTION, "frictionloss", []),
                                  ("clampctrl", CLAMP, "clampctrl", [5.0]), ("constraint", CONSTRAINT, "constraint", [])]:
        for value in ("enable", "disable"):
            text = xml.format(flag=f'<flag {flag}="{value}"/>')
            cases.append({"name": name, "flag": flag, "value": value, "xml": text, "ctrl": ctrl, "steps": 200,
                          "qpos": run(text, ctrl, 200)})
    site = mujoco.MjModel.from_xml_string(SITE)
    out = {"mujoco": mujoco.__version__, "cases": cases,
           "site_fromto": {"xml": SITE, "site_pos": [float(x) for x in site.site_pos[0]]}}
    path = Path(__file__).resolve().parents[2] / "tests/data/mujoco/option_flags.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
