#!/usr/bin/env python3
"""MuJoCo's steady sag of a body hanging on a soft weld (fixture for tests/test_holonomic.cpp).

The minimal case behind the Fetch gripper's sag (docs/robots.md "Scenarios", docs/model-import.md
"Compliance from solref"): a free body (mass 2 kg, inertia diag(0.02, 0.03, 0.04), com at its
origin, at (0.2, -0.1, 1)) welded to a mocap body at the same pose, gravity -9.81 z, solref
(0.02, 1), time step 2 ms, 2 s (1,000 steps). One run per solimp; the sag is 1 - z of the body's
origin at 2 s. MuJoCo's soft constraint at rest obeys R f = aref (mj: (A + R) f = aref - a0 with
A f + a0 = 0), R = (1 - d)/d diagApprox, aref = -K d x, K = 1/(dmax tc dr)^2, so with d = dmax the
sag is (1 - d) g (tc dr)^2; the script checks that and writes MuJoCo's numbers to
tests/data/mujoco/weld_sag.json with the constraint rows' diagApprox (MuJoCo's mass
normalisation: 1/m on the translation rows, the mean inverse rotational inertia on the others).

    ~/.cache/sap-robot-corpus/venv/bin/python tools/reference/weld_sag_reference.py
"""
import json
from pathlib import Path

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[2]

XML = """<mujoco>
  <option timestep="0.002" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="mocap" mocap="true" pos="0.2 -0.1 1"/>
    <body name="box" pos="0.2 -0.1 1">
      <freejoint/>
      <inertial pos="0 0 0" mass="2" diaginertia="0.02 0.03 0.04"/>
    </body>
  </worldbody>
  <equality>
    <weld body1="mocap" body2="box" solref="0.02 1" solimp="{solimp}"/>
  </equality>
</mujoco>
"""

# (d0, dmax, width): d0 = dmax gives a constant impedance; the last one is MuJoCo's default
# (and the Fetch weld's), whose d lies between 0.9 and 0.95 at the sag.
SOLIMPS = [(0.1, 0.1, 0.001), (0.5, 0.5, 0.001), (0.9, 0.9, 0.001), (0.95, 0.95, 0.001), (0.99, 0.99, 0.001),
           (0.9, 0.95, 0.001)]


def main():
    runs = []
    for solimp in SOLIMPS:
        m = mujoco.MjModel.from_xml_string(XML.format(solimp=" ".join(map(str, solimp))))
        d = mujoco.MjData(m)
        for _ in range(1000):
            mujoco.mj_step(m, d)
        sag = 1.0 - d.body("box").xpos[2]
        runs.append({"solimp": list(solimp), "sag": sag, "vz": float(d.qvel[2]),
                     "efc_diagApprox": d.efc_diagApprox.tolist()})
        if solimp[0] == solimp[1]:
            dd = solimp[0]
            predicted = (1 - dd) * 9.81 * 0.02 ** 2
            assert abs(sag - predicted) < 1e-4 * predicted, (solimp, sag, predicted)
        print("solimp %-20s sag %.4f mm  diagApprox %s" % (solimp, 1e3 * sag, np.round(d.efc_diagApprox, 4)))
    # The rotation rows: the com 0.09 m along -x of the weld's anchor (the body origin), so the weld
    # carries the torque m g 0.09 about y as well; d = 0.5. MuJoCo's rotational residual is the
    # vector part of the error quaternion (about half the angle) with a Jacobian of half the
    # angular velocity, while its diagApprox stays the body's mean inverse rotational inertia
    # (at the com): the row sags 4 times what its normalisation says, (1 - d) 4 tau diagApprox / K.
    xml = XML.replace('pos="0 0 0" mass', 'pos="-0.09 0 0" mass').format(solimp="0.5 0.5 0.001")
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for _ in range(1000):
        mujoco.mj_step(m, d)
    q = d.qpos[3:7]
    pitch = 2 * np.arcsin(np.linalg.norm(q[1:])) * np.sign(q[2])  # rotation about y (the only one)
    torque = 2.0 * 9.81 * 0.09
    predicted = -(1 - 0.5) * 4 * torque * d.efc_diagApprox[3] * 0.02 ** 2
    assert abs(pitch - predicted) < 1e-2 * abs(predicted), (pitch, predicted)
    offset = {"com": [-0.09, 0, 0], "solimp": [0.5, 0.5, 0.001], "sag": 1.0 - d.qpos[2], "pitch": pitch,
              "efc_diagApprox": d.efc_diagApprox.tolist()}
    print("com offset -0.09 x, d = 0.5: sag %.4f mm pitch %.4f mrad (predicted %.4f)" % (1e3 * offset["sag"], 1e3 * pitch,
                                                                                         1e3 * predicted))
    out = {"mujoco": mujoco.__version__, "xml": XML, "dt": 0.002, "steps": 1000, "solref": [0.02, 1.0],
           "mass": 2.0, "runs": runs, "com_offset": offset}
    path = REPO / "tests" / "data" / "mujoco" / "weld_sag.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
