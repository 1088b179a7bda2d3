#!/usr/bin/env python3
"""Writes scenes/g1_rough_terrain.xml: Unitree G1 standing on a rough heightfield (issue 18).

The G1 model of models/unitree_g1 (unitree_g1_mjlab.xml) is included unmodified. Its own position
actuators (mjlab's kp/kv, e.g. ankles kp 28.5 Nm/rad, 50 Nm limit) cannot hold it up without a
balance controller: about the ankles the robot is an inverted pendulum of gravity stiffness
m g h = 35 kg x 9.81 x 0.7 m = 240 Nm/rad, against 2 x 28.5 Nm/rad of ankle servo stiffness,
and MuJoCo's G1 falls within 1.5 s from the standing keyframe with these gains (--mujoco shows
it). The scene therefore adds stiff "stand" position servos on the 12 leg joints and the 3 waist
joints (kp STAND_KP, kv STAND_KV, no force limit), acting beside the model's own actuators with
the same targets: a stand-in for a balance controller. The arms keep the model's actuators.

The keyframe "stand" is mjlab's standing pose ("home" of scene_flat.xml), its pelvis lifted by
LIFT above the highest ground under its soles, at STAND_XY, with ctrl in the actuators' order (scene_flat.xml's
"home" ctrl lists the targets in joint order, which is not the actuator order of the file: with
it, the shoulders get the hips' targets; here every position actuator gets its joint's qpos).

    tools/reference/make_terrain_scene.py                 # writes scenes/g1_rough_terrain.xml
    ~/.cache/sap-robot-corpus/venv/bin/python tools/reference/make_terrain_scene.py --mujoco
        # also runs MuJoCo on it with and without the stand servos and prints the pelvis height
"""
import argparse
import math
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
G1 = REPO / "models" / "unitree_g1" / "unitree_g1_mjlab.xml"
OUT = REPO / "scenes" / "g1_rough_terrain.xml"
N, HALF, TOP = 41, 2.0, 0.03  # samples per side, half size (m), peak to valley (m)
LIFT = 0.01
# Where the robot stands: a spot whose ground under the soles is uneven (1 cm between the
# best-fit plane's highest and lowest residual) but not tilted as a whole (best-fit plane 0.2
# degrees). A robot servoed rigidly to one pose has no balance: on most spots it rocks over a
# bump and falls, in MuJoCo as here (at the origin, a 5 degree slope under the feet, it tips
# over). This spot is one where MuJoCo's G1 stands, also when moved by 2 cm in x or y.
STAND_XY = (-0.75, -0.90)
STAND_KP = {"hip_pitch": 500, "hip_roll": 500, "hip_yaw": 300, "knee": 500, "ankle_pitch": 400, "ankle_roll": 300,
            "waist_yaw": 300, "waist_roll": 300, "waist_pitch": 300}
STAND_KV = 20
# mjlab's standing pose ("home" keyframe of scene_flat.xml), joint order of the file
HOME = {"left_hip_pitch_joint": -0.1, "left_knee_joint": 0.3, "left_ankle_pitch_joint": -0.2,
        "right_hip_pitch_joint": -0.1, "right_knee_joint": 0.3, "right_ankle_pitch_joint": -0.2,
        "left_shoulder_pitch_joint": 0.2, "left_shoulder_roll_joint": 0.2, "left_elbow_joint": 1.28,
        "right_shoulder_pitch_joint": 0.2, "right_shoulder_roll_joint": -0.2, "right_elbow_joint": 1.28}
PELVIS_Z = 0.783675


def height(x, y):
    """Three crossed sinusoids, wavelengths 0.55 to 1.9 m (before normalisation)."""
    return (0.45 * math.sin(2 * math.pi * x / 1.6 + 0.4) * math.sin(2 * math.pi * y / 1.9 + 1.1) +
            0.30 * math.sin(2 * math.pi * (x + 0.6 * y) / 0.9 + 0.3) +
            0.25 * math.cos(2 * math.pi * (0.7 * x - y) / 0.55 + 2.0))


def ground_z(x, y, lo, hi):
    return -TOP / 2 + TOP * (height(x, y) - lo) / (hi - lo)


def sole_points(x0, y0):
    """Points under the two soles of the standing pose (x -6..14 cm, |y| 9..15 cm from the pelvis)."""
    return [(x0 + -0.06 + 0.04 * i, y0 + s * dy) for s in (-1, 1) for i in range(6) for dy in (0.09, 0.12, 0.15)]


def scene_xml(include, stand_servos=True):
    g1 = G1.read_text()
    joints = re.findall(r'<joint name="([^"]+)"', g1)
    actuated = re.findall(r'<position name="[^"]+" joint="([^"]+)"', g1)
    legs = [j for j in joints if re.search(r"(hip|knee|ankle|waist)", j)]
    if stand_servos:
        actuated += legs
    vals = [[height(-HALF + 2 * HALF * c / (N - 1), -HALF + 2 * HALF * r / (N - 1)) for c in range(N)] for r in range(N)]
    lo = min(min(r) for r in vals)
    hi = max(max(r) for r in vals)
    elev = "\n".join("        " + " ".join("%.3f" % ((v - lo) / (hi - lo)) for v in row) for row in vals)
    # pelvis height of the flat-floor keyframe, raised to the highest ground under the soles + LIFT
    top_under_feet = max(ground_z(x, y, lo, hi) for x, y in sole_points(*STAND_XY))
    qpos = [STAND_XY[0], STAND_XY[1], round(PELVIS_Z + top_under_feet + LIFT, 6), 1, 0, 0, 0] + [HOME.get(j, 0.0) for j in joints]
    ctrl = [HOME.get(j, 0.0) for j in actuated]
    servos = ""
    if stand_servos:
        lines = []
        for j in legs:
            kind = re.sub(r"^(left|right)_|_joint$", "", j)
            lines.append('    <position name="stand_%s" joint="%s" kp="%g" kv="%g"/>' % (j, j, STAND_KP[kind], STAND_KV))
        servos = "  <actuator>\n" + "\n".join(lines) + "\n  </actuator>\n\n"
    fmt = lambda v: " ".join("%g" % x for x in v)
    return f'''<!--
  Generated by tools/reference/make_terrain_scene.py (read it for the why of each choice).
  Unitree G1 (../models/unitree_g1/unitree_g1_mjlab.xml, included unmodified) standing
  on rough ground: a {2 * HALF:g} m x {2 * HALF:g} m heightfield of {N} x {N} samples ({2 * HALF / (N - 1) * 100:g} cm cells), {TOP * 100:g} cm from
  its lowest to its highest point, three crossed sinusoids (wavelengths 0.55 to 1.9 m, slopes up
  to 5 degrees between neighbouring samples):
    h(x, y) = 0.45 sin(2 pi x / 1.6 + 0.4) sin(2 pi y / 1.9 + 1.1)
            + 0.30 sin(2 pi (x + 0.6 y) / 0.9 + 0.3) + 0.25 cos(2 pi (0.7 x - y) / 0.55 + 2.0)
  sampled at x, y = -{HALF:g} + {2 * HALF / (N - 1):g} i (row r: y = -{HALF:g} + {2 * HALF / (N - 1):g} r), normalised to [0, 1] (as MuJoCo
  does) and scaled by size[2] = {TOP:g}; the geom at z = -{TOP / 2:g} puts the ground in z = [-{TOP / 2:g}, {TOP / 2:g}].
  The model's own servos cannot hold the robot up without a balance controller; stiff "stand"
  position servos on the legs and waist (kp 300 to 500 Nm/rad, kv {STAND_KV:g}) act beside them with
  the same targets. Keyframe "stand": mjlab's standing pose, pelvis {LIFT * 100:g} cm higher, ctrl in
  actuator order, standing at x, y = {STAND_XY[0]:g}, {STAND_XY[1]:g} (rough under the soles, not tilted as a
  whole), {LIFT * 100:g} cm above the highest ground under its soles. Used by scenes/g1_rough_terrain.json
  (docs/collision.md).
-->
<mujoco model="g1_rough_terrain">
  <include file="{include}"/>

  <asset>
    <hfield name="terrain" nrow="{N}" ncol="{N}" size="{HALF:g} {HALF:g} {TOP:g} 0.1" elevation="
{elev}"/>
  </asset>

  <worldbody>
    <geom name="terrain" type="hfield" hfield="terrain" pos="0 0 {-TOP / 2:g}" contype="1" conaffinity="1"/>
  </worldbody>

{servos}  <keyframe>
    <key name="stand" qpos="{fmt(qpos)}"
         ctrl="{fmt(ctrl)}"/>
  </keyframe>
</mujoco>
'''


def mujoco_check():
    import tempfile
    import mujoco
    with tempfile.TemporaryDirectory() as tmp:
        for servos in (False, True):
            (Path(tmp) / "scene.xml").write_text(scene_xml(str(G1), servos))
            m = mujoco.MjModel.from_xml_path(str(Path(tmp) / "scene.xml"))
            d = mujoco.MjData(m)
            mujoco.mj_resetDataKeyframe(m, d, 0)
            zmin = 9
            for k in range(int(round(2.0 / m.opt.timestep))):
                mujoco.mj_step(m, d)
                zmin = min(zmin, d.body("pelvis").xpos[2])
            print("MuJoCo %s, %s stand servos: pelvis min height over 2 s %.4f m, end %s" %
                  (mujoco.__version__, "with" if servos else "without", zmin, d.body("pelvis").xpos.round(4).tolist()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mujoco", action="store_true", help="also run the scene in MuJoCo (needs the mujoco package)")
    a = ap.parse_args()
    OUT.write_text(scene_xml("../models/unitree_g1/unitree_g1_mjlab.xml"))
    print("wrote", OUT)
    if a.mujoco:
        mujoco_check()
    return 0


if __name__ == "__main__":
    sys.exit(main())
