#!/usr/bin/env python3
"""Write MuJoCo oracles of what an MJCF file means for contact (issue 29; docs/model-import.md).

MuJoCo's Python package is the spec: every case is an MJCF text (stored in the fixture, so that
a test loads the very same file through our importer) and what MuJoCo made of it. Fixtures, all
under tests/data/mujoco/:

  contact_params.json    mj_forward on a box resting on a floor with the geoms' contact
                         attributes varied: the contacts' friction (5), condim, solref, solimp,
                         includemargin and exclude flag. Friction combination (element-wise max,
                         priority), condim (max, priority), solmix, margin/gap, <pair> (its own
                         parameters; it collides whatever contype/conaffinity say), <exclude>,
                         contype/conaffinity, geoms that never collide.
  contact_filter.json    which geom pairs collide in a chain of bodies: parent-child filtering
                         (on and off), weld groups (bodies without joints), the world, <exclude>.
  friction_outcomes.json a box on a floor under gravity tilted by atan(0.5): sticks or slides
                         (displacement along the slope at 1 s, fitted acceleration) with the
                         friction of the two geoms, priority, <pair> and condim varied; and the
                         height at which a box comes to rest on a floor with margins and gaps.
  friction_rates.json    torsional and rolling friction: a sphere spinning about the vertical
                         (condim 4) slows at d(omega)/dt = -mu_spin m g / I; a ball rolling
                         without slip (condim 6) slows at dv/dt = -5 mu_roll g / (7 r); the same
                         at condim 3 keeps its spin / roll. Sampled trajectories, fitted rates,
                         the analytic rates; elliptic and pyramidal cones.
  mesh_contact_sets.json resting and sliding convex meshes on meshes and boxes: contact sets
                         (geoms, dist, pos, normal) at sampled times, and the trajectory; e.g. a
                         slab resting off-centre on a mesh base stays put on its 4-point patch.
  validation_errors.json what MuJoCo's compiler accepts and rejects (and its message): moving
                         bodies with tiny or singular inertia, a free body with inertia
                         diag(1, 1, 0), non-finite mesh vertices, malformed .msh files, qpos0
                         outside a joint range, models without degrees of freedom.

Setup (any venv with mujoco 4.0.0; .venv-mujoco is git-ignored):
    python3 -m venv .venv-mujoco && .venv-mujoco/bin/pip install mujoco==4.0.0 numpy
Run from the repository root:
    .venv-mujoco/bin/python tools/reference/mujoco_contact_semantics.py [--only NAME]
"""

import argparse
import json
import math
import os
import struct
import tempfile

import mujoco
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(REPO, "tests", "data", "mujoco")


def compile_xml(xml):
    return mujoco.MjModel.from_xml_string(xml)


def geom_name(m, g):
    return mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"#{g}"


def contact_record(m, d, c, full=True):
    e = {"geom": [geom_name(m, c.geom[0]), geom_name(m, c.geom[1])], "dist": float(c.dist),
         "pos": [float(x) for x in c.pos], "normal": [float(x) for x in c.frame[:3]]}
    if full:
        e.update({"friction": [float(x) for x in c.friction], "condim": int(c.dim),
                  "solref": [float(x) for x in c.solref], "solreffriction": [float(x) for x in c.solreffriction],
                  "solimp": [float(x) for x in c.solimp], "includemargin": float(c.includemargin),
                  "exclude": int(c.exclude)})
    return e


# ---------------------------------------------------------------------------------------------
# contact_params.json

def nominal_dist(xml):
    """The box's clearance above the floor in a box_on_floor model (z - 0.1)."""
    import re
    return float(re.search(r'<body name="box" pos="0 0 ([-0-9.e]+)"', xml).group(1)) - 0.1


def box_on_floor(floor_attr="", box_attr="", z=0.099, contact="", option=""):
    return (f'<mujoco model="box_on_floor"><option {option}/><worldbody>'
            f'<geom name="floor" type="plane" size="2 2 0.1" {floor_attr}/>'
            f'<body name="box" pos="0 0 {z}"><freejoint/>'
            f'<geom name="box" type="box" size="0.1 0.1 0.1" {box_attr}/></body>'
            f'</worldbody>{contact}</mujoco>')


PARAM_CASES = [
    ("max_friction", box_on_floor('friction="0.3 0.01 0.001"', 'friction="0.8 0.002 0.0005"'),
     "element-wise max of the two geoms' (slide, spin, roll)"),
    ("zero_against_one", box_on_floor('friction="1 0.005 0.0001"', 'friction="0 0 0"'),
     "a frictionless geom against mu = 1: mu = 1 (Drake's harmonic mean would give 0)"),
    ("priority_takes_its_own", box_on_floor('friction="1 0.005 0.0001" condim="6"',
                                            'friction="0.1 0.001 0.00001" priority="1" condim="1"'),
     "the higher-priority geom's friction and condim are used as they are"),
    ("priority_zero_friction", box_on_floor('friction="1 0.005 0.0001"', 'friction="0 0 0" priority="2"'),
     "priority geom with friction 0: clamped to MuJoCo's minimum 1e-5"),
    ("condim_max", box_on_floor('condim="1"', 'condim="4"'), "condim: the larger of the two"),
    ("condim_6", box_on_floor('condim="6" friction="0.9 0.02 0.003"', 'condim="3"'), "condim 6 with 5 coefficients"),
    ("solmix", box_on_floor('solref="0.02 1" solimp="0.9 0.95 0.001 0.5 2" solmix="1"',
                            'solref="0.04 0.5" solimp="0.8 0.99 0.002 0.5 2" solmix="3"'),
     "solref/solimp mixed with weight solmix1 / (solmix1 + solmix2); friction still max"),
    ("solmix_priority", box_on_floor('solref="0.02 1" solmix="1"', 'solref="0.04 0.5" solmix="3" priority="1"'),
     "priority overrides solmix: the priority geom's solref"),
    ("solref_direct", box_on_floor('solref="-10000 -100"', 'solref="-20000 -50"'),
     "solref in direct form (-stiffness, -damping) on both geoms"),
    ("margin_gap_inside", box_on_floor('margin="0.02" gap="0.01"', 'margin="0.01"', z=0.115),
     "margins and gaps: a contact at dist 0.015"),
    ("margin_gap_gap_band", box_on_floor('margin="0.02" gap="0.01"', 'margin="0.01"', z=0.135),
     "a contact at dist 0.035: detected but excluded (inside the gap band)"),
    ("margin_gap_beyond", box_on_floor('margin="0.02" gap="0.01"', 'margin="0.01"', z=0.145),
     "dist 0.045: no contact"),
    ("margin_only_one", box_on_floor('', 'margin="0.01"', z=0.105), "one geom's margin, dist 0.005"),
    ("pair_overrides", box_on_floor('friction="1 0.005 0.0001"', 'contype="0" conaffinity="0"',
                                    contact='<contact><pair geom1="floor" geom2="box" condim="6" '
                                            'friction="0.1 0.2 0.005 0.0001 0.0002" margin="0.01" gap="0.002" '
                                            'solref="0.03 0.7" solreffriction="0.05 1" solimp="0.8 0.9 0.001 0.5 2"/>'
                                            '</contact>'),
     "<pair>: its own 5 coefficients, condim, margin, gap, solref, solreffriction, solimp; it collides "
     "although the box has contype = conaffinity = 0"),
    ("pair_defaults", box_on_floor('friction="0.4 0.005 0.0001" condim="4"', 'friction="0.7 0.003 0.0002"',
                                   contact='<contact><pair geom1="box" geom2="floor"/></contact>'),
     "<pair> without attributes: MuJoCo's pair defaults (not the geoms' combination)"),
    ("exclude", box_on_floor(contact='<contact><exclude body1="world" body2="box"/></contact>'),
     "<exclude> of the body pair: no contact"),
    ("contype_mismatch", box_on_floor('contype="1" conaffinity="1"', 'contype="2" conaffinity="2"'),
     "(contype1 & conaffinity2) | (contype2 & conaffinity1) = 0: no contact"),
    ("contype_one_way", box_on_floor('contype="1" conaffinity="1"', 'contype="1" conaffinity="0"'),
     "one direction of the bit test is enough: contact"),
    ("visual_only", box_on_floor('', 'contype="0" conaffinity="0"'), "a geom that never collides: no contact"),
]


def compiled_geoms(m):
    """Each geom's contact attributes as MuJoCo compiled them (defaults applied)."""
    out = {}
    for g in range(m.ngeom):
        out[geom_name(m, g)] = {
            "body": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g]) or "world",
            "contype": int(m.geom_contype[g]), "conaffinity": int(m.geom_conaffinity[g]),
            "condim": int(m.geom_condim[g]), "priority": int(m.geom_priority[g]),
            "friction": m.geom_friction[g].tolist(), "solmix": float(m.geom_solmix[g]),
            "solref": m.geom_solref[g].tolist(), "solimp": m.geom_solimp[g].tolist(),
            "margin": float(m.geom_margin[g]), "gap": float(m.geom_gap[g])}
    return out


def compiled_pairs(m):
    return [{"geom": [geom_name(m, m.pair_geom1[i]), geom_name(m, m.pair_geom2[i])], "condim": int(m.pair_dim[i]),
             "friction": m.pair_friction[i].tolist(), "solref": m.pair_solref[i].tolist(),
             "solreffriction": m.pair_solreffriction[i].tolist(), "solimp": m.pair_solimp[i].tolist(),
             "margin": float(m.pair_margin[i]), "gap": float(m.pair_gap[i])} for i in range(m.npair)]


def make_contact_params():
    cases = []
    for name, xml, what in PARAM_CASES:
        m = compile_xml(xml)
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        contacts = [contact_record(m, d, c) for c in d.contact[: d.ncon]]
        cases.append({"name": name, "what": what, "xml": xml, "contacts": contacts, "nominal_dist": nominal_dist(xml),
                      "geoms": compiled_geoms(m), "pairs": compiled_pairs(m),
                      "nefc_contact_rows": int(sum(1 for t in d.efc_type[: d.nefc]
                                                   if t in (mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS,
                                                            mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL,
                                                            mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC)))})
    # Margin/gap probe: detection and inclusion over a grid of margins, gaps and distances.
    probe = []
    for fm, fg, bm, bg in [(0, 0, 0.01, 0.004), (0.02, 0, 0.01, 0.004), (0.02, 0.01, 0.01, 0),
                           (0.01, 0.004, 0.01, 0.004), (0.005, 0.01, 0, 0)]:
        for dist in [-0.001, 0.004, 0.012, 0.017, 0.025, 0.031, 0.037, 0.05]:  # 1 mm off every boundary
            xml = box_on_floor(f'margin="{fm}" gap="{fg}"', f'margin="{bm}" gap="{bg}"', z=0.1 + dist)
            m = compile_xml(xml)
            d = mujoco.MjData(m)
            mujoco.mj_forward(m, d)
            c = d.contact[0] if d.ncon else None
            probe.append({"margin": [fm, bm], "gap": [fg, bg], "dist": dist, "ncon": int(d.ncon), "xml": xml,
                          "includemargin": float(c.includemargin) if c else None,
                          "exclude": int(c.exclude) if c else None, "nefc": int(d.nefc)})
    return {"cases": cases, "margin_gap_probe": probe}


# ---------------------------------------------------------------------------------------------
# contact_filter.json

def chain_xml(option="", contact=""):
    # Overlapping capsules along a chain: world geom w0; body a (free) with geom a0; its child b
    # (hinge) with b0; b's child c (hinge) with c0; body bw welded to b (no joint) with bw0; c's
    # child d (hinge) with d0; body e (hinge, child of the world) with e0 overlapping w0.
    cap = 'type="capsule" size="0.05" fromto="0 0 0 0.3 0 0"'
    return (f'<mujoco model="chain"><option {option}/><worldbody>'
            f'<geom name="w0" type="box" size="0.2 0.2 0.05" pos="0 0 -0.02"/>'
            f'<body name="e" pos="0 0 0.02"><joint name="je" axis="0 0 1"/><geom name="e0" {cap}/></body>'
            f'<body name="a" pos="1 0 1"><freejoint/><geom name="a0" {cap}/>'
            f'<body name="b" pos="0.25 0 0"><joint name="jb" axis="0 0 1"/><geom name="b0" {cap}/>'
            f'<body name="bw" pos="0.1 0 0"><geom name="bw0" type="sphere" size="0.06"/></body>'
            f'<body name="c" pos="0.25 0 0"><joint name="jc" axis="0 0 1"/><geom name="c0" {cap}/>'
            f'<body name="d" pos="0.25 0 0"><joint name="jd" axis="0 0 1"/><geom name="d0" {cap}/>'
            f'</body></body></body></body></worldbody>{contact}</mujoco>')


def make_contact_filter():
    cases = []
    for name, xml, what in [
        ("chain", chain_xml(), "parent-child filtering on (MuJoCo's default)"),
        ("chain_filterparent_off", chain_xml(option='><flag filterparent="disable"/></option><option'),
         "filterparent disabled"),
        ("chain_exclude_world", chain_xml(contact='<contact><exclude body1="world" body2="e"/></contact>'),
         "<exclude> between the world and a body that would collide with it"),
        ("chain_filterparent_off_exclude",
         chain_xml(option='><flag filterparent="disable"/></option><option',
                   contact='<contact><exclude body1="a" body2="b"/><exclude body1="c" body2="d"/></contact>'),
         "filterparent disabled, two parent-child pairs excluded by name"),
    ]:
        m = compile_xml(xml)
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        pairs = sorted({tuple(sorted((geom_name(m, c.geom[0]), geom_name(m, c.geom[1])))) for c in d.contact[: d.ncon]})
        bodies = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or "world": {
            "parent": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.body_parentid[b]) or "world",
            "weld": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.body_weldid[b]) or "world"} for b in range(m.nbody)}
        cases.append({"name": name, "what": what, "xml": xml, "pairs": [list(p) for p in pairs],
                      "geoms": compiled_geoms(m), "bodies": bodies,
                      "filterparent": not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT),
                      "exclude": [[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, (int(s) >> 16) & 0xFFFF) or "world",
                                   mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, int(s) & 0xFFFF) or "world"]
                                  for s in m.exclude_signature]})
    return {"cases": cases}


# ---------------------------------------------------------------------------------------------
# friction_outcomes.json

SLOPE = 0.5  # tan of the tilt: gravity (g sin, 0, -g cos) with tan = 0.5


def tilted_box(floor_attr, box_attr, contact="", cone="elliptic"):
    g = 9.81
    th = math.atan(SLOPE)
    return (f'<mujoco model="tilted_box"><option timestep="0.002" cone="{cone}" '
            f'gravity="{g * math.sin(th):.17g} 0 {-g * math.cos(th):.17g}"/><worldbody>'
            f'<geom name="floor" type="plane" size="5 5 0.1" {floor_attr}/>'
            f'<body name="box" pos="0 0 0.1"><freejoint/>'
            f'<geom name="box" type="box" size="0.1 0.1 0.1" mass="1" {box_attr}/></body>'
            f'</worldbody>{contact}</mujoco>')


OUTCOME_CASES = [
    ("box_mu0_floor_mu1", 'friction="1 0.005 0.0001"', 'friction="0 0 0"', "", "max 1 > 0.5: sticks"),
    ("box_mu0_priority", 'friction="1 0.005 0.0001"', 'friction="0 0 0" priority="1"', "",
     "the priority geom is frictionless: slides at g sin"),
    ("box_mu03_floor_mu02", 'friction="0.2 0.005 0.0001"', 'friction="0.3 0.005 0.0001"', "",
     "max 0.3 < 0.5: slides at g (sin - 0.3 cos)"),
    ("box_mu07_floor_mu02", 'friction="0.2 0.005 0.0001"', 'friction="0.7 0.005 0.0001"', "",
     "max 0.7 > 0.5: sticks (the harmonic mean 0.31 would slide)"),
    ("pair_mu01", 'friction="1 0.005 0.0001"', 'friction="1 0.005 0.0001"',
     '<contact><pair geom1="floor" geom2="box" friction="0.1 0.1 0.005 0.0001 0.0001"/></contact>',
     "<pair> friction 0.1 replaces the geoms' 1: slides at g (sin - 0.1 cos)"),
    ("condim1_floor", 'friction="1 0.005 0.0001" condim="1"', 'friction="1 0.005 0.0001" condim="1"', "",
     "condim 1 on both: frictionless, slides at g sin"),
]


def simulate(xml, t_end, sample_dt, body="box", qvel0=None):
    m = compile_xml(xml)
    d = mujoco.MjData(m)
    if qvel0 is not None:
        d.qvel[:] = qvel0
    mujoco.mj_forward(m, d)
    n = int(round(t_end / m.opt.timestep))
    every = int(round(sample_dt / m.opt.timestep))
    ts, qpos, qvel = [0.0], [d.qpos.copy()], [d.qvel.copy()]
    for i in range(1, n + 1):
        mujoco.mj_step(m, d)
        if i % every == 0:
            ts.append(i * m.opt.timestep)
            qpos.append(d.qpos.copy())
            qvel.append(d.qvel.copy())
    return m, d, np.array(ts), np.array(qpos), np.array(qvel)


def margin_rest_xml(floor_margin, box_margin, gap):
    return (f'<mujoco model="margin_rest"><option timestep="0.002"/><worldbody>'
            f'<geom name="floor" type="plane" size="5 5 0.1" margin="{floor_margin}" gap="{gap}"/>'
            f'<body name="box" pos="0 0 0.15"><freejoint/>'
            f'<geom name="box" type="box" size="0.1 0.1 0.1" mass="1" margin="{box_margin}"/></body>'
            f'</worldbody></mujoco>')


def make_friction_outcomes():
    cases = []
    # Where a box comes to rest on a floor with margins (and a gap): its height above contact.
    rest = []
    for fm, bm, gap in [(0, 0, 0), (0.01, 0, 0), (0.01, 0.005, 0), (0.01, 0, 0.004)]:
        xml = margin_rest_xml(fm, bm, gap)
        m, d, ts, qpos, qvel = simulate(xml, 2.0, 0.05)
        rest.append({"margin": [fm, bm], "gap": [gap, 0], "xml": xml, "rest_gap": float(qpos[-1, 2] - 0.1),
                     "t": ts.tolist(), "z": qpos[:, 2].tolist()})
    g = 9.81
    th = math.atan(SLOPE)
    for name, fa, ba, contact, what in OUTCOME_CASES:
        for cone in ("elliptic", "pyramidal"):
            xml = tilted_box(fa, ba, contact, cone)
            m, d, ts, qpos, qvel = simulate(xml, 1.0, 0.05)
            x = qpos[:, 0] - qpos[0, 0]
            late = ts >= 0.3  # past the settling of the first contact
            accel = float(np.polyfit(ts[late], qvel[late, 0], 1)[0])
            cases.append({"name": name, "cone": cone, "what": what, "xml": xml, "t": ts.tolist(),
                          "x": x.tolist(), "z": qpos[:, 2].tolist(), "vx": qvel[:, 0].tolist(),
                          "x_at_1s": float(x[-1]), "fitted_accel": accel,
                          "g_sin": g * math.sin(th), "g_cos": g * math.cos(th)})
    return {"slope_tan": SLOPE, "cases": cases, "margin_rest": rest}


# ---------------------------------------------------------------------------------------------
# friction_rates.json

def sphere_xml(condim, friction, cone, radius, floor_condim=None):
    fc = floor_condim or condim
    return (f'<mujoco model="sphere_{condim}"><option timestep="0.002" cone="{cone}"/><worldbody>'
            f'<geom name="floor" type="plane" size="20 20 0.1" condim="{fc}" friction="{friction}"/>'
            f'<body name="ball" pos="0 0 {radius}"><freejoint/>'
            f'<geom name="ball" type="sphere" size="{radius}" mass="1" condim="{condim}" friction="{friction}"/>'
            f'</body></worldbody></mujoco>')


def make_friction_rates():
    g, r, m_ball = 9.81, 0.1, 1.0
    inertia = 0.4 * m_ball * r * r
    cases = []
    mu_spin, mu_roll = 0.02, 0.005
    for cone in ("elliptic", "pyramidal"):
        # Spinning: omega_z(0) = 20 rad/s; torsional friction torque mu_spin m g.
        for condim in (4, 6, 3):
            xml = sphere_xml(condim, f"1 {mu_spin} {mu_roll}", cone, r)
            qvel0 = np.zeros(6)
            qvel0[5] = 20.0
            m, d, ts, qpos, qvel = simulate(xml, 0.6, 0.01, qvel0=qvel0)
            w = qvel[:, 5]
            fit = (ts >= 0.05) & (w > 2.0)
            rate = float(np.polyfit(ts[fit], w[fit], 1)[0]) if fit.sum() > 3 else 0.0
            cases.append({"name": f"spin_condim{condim}", "cone": cone, "xml": xml, "quantity": "omega_z",
                          "qvel0": qvel0.tolist(), "t": ts.tolist(), "value": w.tolist(), "fitted_rate": rate,
                          "analytic_rate": -mu_spin * m_ball * g / inertia if condim >= 4 else 0.0})
        # Rolling: v_x(0) = 1 m/s, omega_y = v / r (no slip); rolling friction torque mu_roll m g.
        for condim in (6, 4, 3):
            xml = sphere_xml(condim, f"1 {mu_spin} {mu_roll}", cone, r)
            qvel0 = np.zeros(6)
            qvel0[0], qvel0[4] = 1.0, 1.0 / r
            m, d, ts, qpos, qvel = simulate(xml, 2.0, 0.02, qvel0=qvel0)
            v = qvel[:, 0]
            fit = (ts >= 0.1) & (v > 0.1)
            rate = float(np.polyfit(ts[fit], v[fit], 1)[0]) if fit.sum() > 3 else 0.0
            cases.append({"name": f"roll_condim{condim}", "cone": cone, "xml": xml, "quantity": "v_x",
                          "qvel0": qvel0.tolist(), "t": ts.tolist(), "value": v.tolist(), "fitted_rate": rate,
                          "analytic_rate": -5 * mu_roll * g / (7 * r) if condim == 6 else 0.0})
    return {"mu_spin": mu_spin, "mu_roll": mu_roll, "radius": r, "mass": m_ball, "cases": cases}


# ---------------------------------------------------------------------------------------------
# mesh_contact_sets.json

def box_vertices(hx, hy, hz):
    return " ".join(f"{sx * hx:.17g} {sy * hy:.17g} {sz * hz:.17g}"
                    for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1))


def cylinder_vertices(r, hz, n):
    return " ".join(f"{r * math.cos(2 * math.pi * i / n):.17g} {r * math.sin(2 * math.pi * i / n):.17g} {z:.17g}"
                    for z in (-hz, hz) for i in range(n))


def chamfered_box_vertices(hx, hy, hz, c):
    """A box whose 12 edges are chamfered by c: 24 vertices, faces split into several triangles."""
    v = set()
    for sx in (-1, 1):
        for sy in (-1, 1):
            for sz in (-1, 1):
                v.add((sx * (hx - c), sy * hy, sz * (hz - c)))
                v.add((sx * hx, sy * (hy - c), sz * (hz - c)))
                v.add((sx * (hx - c), sy * (hy - c), sz * hz))
    return " ".join(f"{x:.17g}" for p in sorted(v) for x in p)


def mesh_scene(lower, upper, upper_pos, upper_quat="1 0 0 0", friction="0.8 0.005 0.0001", mass=1.0):
    """lower: (kind, xml attrs) fixed to the world; upper: a free body."""
    assets = (f'<mesh name="base" vertex="{box_vertices(0.15, 0.15, 0.05)}"/>'
              f'<mesh name="slab" vertex="{box_vertices(0.2, 0.04, 0.03)}"/>'
              f'<mesh name="cube" vertex="{box_vertices(0.05, 0.05, 0.05)}"/>'
              f'<mesh name="floor" vertex="{box_vertices(1.0, 1.0, 0.05)}"/>'
              f'<mesh name="disk16" vertex="{cylinder_vertices(0.12, 0.05, 16)}"/>'
              f'<mesh name="disk64" vertex="{cylinder_vertices(0.12, 0.05, 64)}"/>'
              f'<mesh name="arm" vertex="{chamfered_box_vertices(0.2, 0.04, 0.03, 0.008)}"/>')
    return (f'<mujoco model="mesh_contact"><option timestep="0.002" cone="elliptic"/>'
            f'<default><geom friction="{friction}"/></default><asset>{assets}</asset><worldbody>'
            f'<geom name="lower" {lower}/>'
            f'<body name="upper" pos="{upper_pos}" quat="{upper_quat}"><freejoint/>'
            f'<geom name="upper" {upper} mass="{mass}"/></body></worldbody></mujoco>')


MESH_CASES = [
    # Resting: the slab lies on the base with its centre 0.1 m off the base's centre (the
    # support patch still holds the centre of mass): it must stay put.
    ("slab_on_base_offcentre", mesh_scene('type="mesh" mesh="base" pos="0 0 0.05"', 'type="mesh" mesh="slab"',
                                          "0.1 0 0.1299"), None, 1.0),
    ("cube_on_cube", mesh_scene('type="mesh" mesh="cube" pos="0 0 0.05"', 'type="mesh" mesh="cube"', "0.02 0.01 0.1499",
                                "0.9800666 0 0 0.1986693"), None, 1.0),
    ("mesh_cube_on_box", mesh_scene('type="box" size="0.15 0.15 0.05" pos="0 0 0.05"', 'type="mesh" mesh="cube"',
                                    "0 0 0.1499"), None, 1.0),
    ("box_on_mesh_base", mesh_scene('type="mesh" mesh="base" pos="0 0 0.05"', 'type="box" size="0.2 0.04 0.03"',
                                    "0.1 0 0.1299"), None, 1.0),
    # An upper arm (a chamfered slab, its faces triangulated) resting off-centre on a round base
    # (a 16- or 64-sided prism: its top face is many coplanar triangles).
    ("arm_on_disk16_base", mesh_scene('type="mesh" mesh="disk16" pos="0 0 0.05"', 'type="mesh" mesh="arm"',
                                      "0.08 0 0.1299"), None, 1.0),
    ("arm_on_disk64_base", mesh_scene('type="mesh" mesh="disk64" pos="0 0 0.05"', 'type="mesh" mesh="arm"',
                                      "0.08 0 0.1299"), None, 1.0),
    # Sliding: a cube pushed at 1 m/s along a mesh floor / a box floor decelerates at mu g and
    # does not tip.
    ("cube_sliding_on_mesh_floor", mesh_scene('type="mesh" mesh="floor" pos="0 0 -0.05"', 'type="mesh" mesh="cube"',
                                              "0 0 0.0499", friction="0.3 0.005 0.0001"),
     [1.0, 0, 0, 0, 0, 0], 0.6),
    ("cube_sliding_on_box_floor", mesh_scene('type="box" size="1 1 0.05" pos="0 0 -0.05"', 'type="mesh" mesh="cube"',
                                             "0 0 0.0499", friction="0.3 0.005 0.0001"),
     [0.7, 0.7, 0, 0, 0, 0], 0.6),
]


def make_mesh_contact_sets():
    cases = []
    for name, xml, qvel0, t_end in MESH_CASES:
        m = compile_xml(xml)
        d = mujoco.MjData(m)
        if qvel0 is not None:
            d.qvel[:] = qvel0
        mujoco.mj_forward(m, d)
        snapshots, ts, qpos, qvel = [], [], [], []
        n = int(round(t_end / m.opt.timestep))
        for i in range(n + 1):
            if i % 25 == 0:
                ts.append(i * m.opt.timestep)
                qpos.append(d.qpos.tolist())
                qvel.append(d.qvel.tolist())
            if i in (0, 1, n // 2, n):
                # mj_step leaves the contacts of the state before its integration: collide a copy
                # at the current state so that qpos and contacts belong together.
                dc = mujoco.MjData(m)
                mujoco.mj_copyData(dc, m, d)
                mujoco.mj_forward(m, dc)
                snapshots.append({"step": i, "t": i * m.opt.timestep, "qpos": d.qpos.tolist(),
                                  "contacts": [contact_record(m, dc, c, full=False) for c in dc.contact[: dc.ncon]]})
            if i < n:
                mujoco.mj_step(m, d)
        cases.append({"name": name, "xml": xml, "qvel0": qvel0, "t": ts, "qpos": qpos, "qvel": qvel,
                      "snapshots": snapshots})
    return {"cases": cases}


# ---------------------------------------------------------------------------------------------
# validation_errors.json

def free_body(inertial, extra_geom=""):
    return (f'<mujoco model="v"><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>'
            f'<body name="b" pos="0 0 1"><freejoint/>{inertial}{extra_geom}</body></worldbody></mujoco>')


def msh_bytes(nv, nn, nt, nf, vert=None, extra=b""):
    vert = vert if vert is not None else [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1][: 3 * nv] + [0.5] * max(0, 3 * nv - 12)
    b = struct.pack("<4i", nv, nn, nt, nf) + struct.pack(f"<{3 * nv}f", *vert)
    b += struct.pack(f"<{3 * nn}f", *([0.0] * 3 * nn)) + struct.pack(f"<{2 * nt}f", *([0.0] * 2 * nt))
    faces = [0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3][: 3 * nf]
    return b + struct.pack(f"<{3 * nf}i", *faces) + extra


VALIDATION_MJCF = [
    ("free_body_inertia_110", free_body('<inertial pos="0 0 0" mass="1" diaginertia="1 1 0"/>'),
     "a free body with a singular inertia diag(1, 1, 0)"),
    ("free_body_tiny_mass", free_body('<inertial pos="0 0 0" mass="1e-20" diaginertia="1e-3 1e-3 1e-3"/>'),
     "a moving body with mass below MuJoCo's minimum"),
    ("free_body_tiny_inertia", free_body('<inertial pos="0 0 0" mass="1" diaginertia="1e-20 1e-20 1e-20"/>'),
     "a moving body with inertia below MuJoCo's minimum"),
    ("free_body_triangle_inequality", free_body('<inertial pos="0 0 0" mass="1" diaginertia="1 1 3"/>'),
     "principal moments violating A + B >= C"),
    ("free_body_negative_mass", free_body('<inertial pos="0 0 0" mass="-1" diaginertia="1 1 1"/>'),
     "negative mass"),
    ("hinge_massless_leaf", '<mujoco model="v"><worldbody><body name="b"><joint name="j" axis="0 0 1"/>'
                            '<geom name="g" type="sphere" size="0.1" mass="0"/></body></worldbody></mujoco>',
     "a moving body without mass"),
    ("hinge_massless_parent_of_moving_child",
     '<mujoco model="v"><worldbody><body name="a"><joint name="ja" axis="0 0 1"/><body name="c" pos="1 0 0">'
     '<joint name="jc" axis="0 1 0"/><geom name="g" type="sphere" size="0.1"/></body></body></worldbody></mujoco>',
     "a massless body with a joint whose child has its own joint"),
    ("hinge_massless_parent_of_welded_child",
     '<mujoco model="v"><worldbody><body name="a"><joint name="ja" axis="0 0 1"/><body name="c" pos="1 0 0">'
     '<geom name="g" type="sphere" size="0.1"/></body></body></worldbody></mujoco>',
     "a massless body with a joint whose child is welded to it and has mass: accepted (the rigid group counts)"),
    ("hinge_point_mass", '<mujoco model="v"><worldbody><body name="a"><joint name="ja" axis="0 0 1"/>'
                         '<inertial pos="1 0 0" mass="1" diaginertia="0 0 0"/></body></worldbody></mujoco>',
     "a point mass on a hinge (zero inertia about its centre of mass)"),
    ("visual_flat_mesh_shell",
     '<mujoco model="v"><asset><mesh name="f" inertia="shell" vertex="0 0 0 1 0 0 0 1 0 1 1 0" face="0 1 2 1 3 2"/>'
     '</asset><worldbody><body name="b" pos="0 0 1"><freejoint/><geom name="g" type="box" size=".1 .1 .1"/>'
     '<geom name="plate" type="mesh" mesh="f" contype="0" conaffinity="0"/></body></worldbody></mujoco>',
     "a flat mesh (inertia shell) on a geom that never collides: accepted, no hull needed"),
    ("visual_flat_mesh_solid",
     '<mujoco model="v"><asset><mesh name="f" vertex="0 0 0 1 0 0 0 1 0 1 1 0" face="0 1 2 1 3 2"/>'
     '</asset><worldbody><body name="b" pos="0 0 1"><freejoint/><geom name="g" type="box" size=".1 .1 .1"/>'
     '<geom name="plate" type="mesh" mesh="f" contype="0" conaffinity="0"/></body></worldbody></mujoco>',
     "a flat mesh with solid inertia: its volume is too small"),
    ("colliding_flat_mesh_shell",
     '<mujoco model="v"><asset><mesh name="f" inertia="shell" vertex="0 0 0 1 0 0 0 1 0 1 1 0" face="0 1 2 1 3 2"/>'
     '</asset><worldbody><body name="b" pos="0 0 1"><freejoint/><geom name="plate" type="mesh" mesh="f"/></body>'
     '</worldbody></mujoco>', "a flat mesh on a colliding geom: no convex hull"),
    ("static_model", '<mujoco model="v"><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>'
                     '<body name="table" pos="0 0 0.5"><geom name="top" type="box" size="0.5 0.5 0.02"/></body>'
                     '</worldbody></mujoco>', "no degrees of freedom (a table): accepted"),
    ("qpos0_outside_range", '<mujoco model="v"><worldbody><body name="b"><joint name="j" axis="0 1 0" '
                            'range="-0.5 0.5" ref="0"/><geom name="g" type="capsule" size="0.05" fromto="0 0 0 0.3 0 0"/>'
                            '</body></worldbody><keyframe><key name="k" qpos="1.6"/></keyframe></mujoco>',
     "a keyframe qpos 1.1 rad outside the joint range: accepted"),
]


URDF_TEMPLATE = (
    '<robot name="r"><link name="base"><inertial><mass value="1"/>'
    '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    '<joint name="j" type="{type}"><parent link="base"/><child link="l"/>{joint}</joint>'
    '<link name="l"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="{izz}" ixy="0" ixz="0" iyz="0"/>'
    '</inertial><collision><geometry><sphere radius="0.1"/></geometry></collision></link></robot>')
LIMIT = '<limit lower="{lo}" upper="{hi}" effort="1" velocity="1"/>'
VALIDATION_URDF = [
    ("urdf_floating_inertia_110", dict(type="floating", joint="", izz="0"), "a floating link with inertia diag(1, 1, 0)"),
    ("urdf_revolute_inertia_110", dict(type="revolute", joint='<axis xyz="0 0 1"/>' + LIMIT.format(lo=-1, hi=1), izz="0"),
     "a revolute link with inertia diag(1, 1, 0)"),
    ("urdf_revolute_inertia_11_2e-15", dict(type="revolute", joint='<axis xyz="0 0 1"/>' + LIMIT.format(lo=-1, hi=1),
                                            izz="2e-15"),
     "a revolute link with inertia diag(1, 1, 2e-15): a principal moment below mjEPS = 1e-14"),
    ("urdf_revolute_inertia_11_1e-13", dict(type="revolute", joint='<axis xyz="0 0 1"/>' + LIMIT.format(lo=-1, hi=1),
                                            izz="1e-13"),
     "a revolute link with inertia diag(1, 1, 1e-13): accepted"),
    ("urdf_fixed_inertia_110", dict(type="fixed", joint="", izz="0"),
     "a link welded to the (static) base with inertia diag(1, 1, 0)"),
    ("urdf_spherical", dict(type="spherical", joint=LIMIT.format(lo=-1, hi=1), izz="1"),
     "a spherical joint with a limit"),
    ("urdf_spherical_no_limit", dict(type="spherical", joint="", izz="1"), "a spherical joint without a limit"),
    ("urdf_lower_above_upper", dict(type="revolute", joint='<axis xyz="0 0 1"/>' + LIMIT.format(lo=1, hi=-1), izz="1"),
     "a revolute joint with lower > upper"),
    ("urdf_axis_4_numbers", dict(type="revolute", joint='<axis xyz="0 0 1 0"/>' + LIMIT.format(lo=-1, hi=1), izz="1"),
     "an axis with 4 numbers"),
    ("urdf_unexpanded_xacro", dict(type="revolute", joint='<axis xyz="0 0 1"/>' + LIMIT.format(lo="$(optenv LOW -1)", hi=1),
                                   izz="1"), "an unexpanded $(optenv ...) in a limit"),
]


def make_validation_errors():
    cases = []

    def record(name, what, fn):
        try:
            m = fn()
            cases.append({"name": name, "what": what, "accepted": True, "nv": int(m.nv), "error": None})
        except Exception as e:  # MuJoCo's ValueError with the compiler's message
            cases.append({"name": name, "what": what, "accepted": False, "error": str(e).strip().splitlines()[0]})

    for name, xml, what in VALIDATION_MJCF:
        record(name, what, lambda xml=xml: compile_xml(xml))
        cases[-1]["xml"] = xml
    for name, kw, what in VALIDATION_URDF:
        urdf = URDF_TEMPLATE.format(**kw)
        record(name, what, lambda urdf=urdf: compile_xml(urdf))
        cases[-1]["urdf"] = urdf
        if cases[-1]["accepted"]:
            m = compile_xml(urdf)
            cases[-1]["jnt_type"] = [mujoco.mjtJoint(t).name for t in m.jnt_type]
            cases[-1]["jnt_limited"] = [bool(x) for x in m.jnt_limited]
            cases[-1]["jnt_range"] = m.jnt_range.tolist()
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "nan_vertex.obj": b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 nan\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
            "inf_vertex.obj": b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 inf\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
            "good.msh": msh_bytes(4, 4, 0, 4),
            "short.msh": msh_bytes(4, 4, 0, 4)[:-4],
            "long.msh": msh_bytes(4, 0, 0, 4, extra=b"\0\0\0\0"),
            "points.msh": msh_bytes(4, 0, 0, 0),
            "three_vertices.msh": msh_bytes(3, 0, 0, 0),
            "bad_face.msh": msh_bytes(4, 0, 0, 4)[:-4] + struct.pack("<i", 9),
        }
        for fname, data in files.items():
            with open(os.path.join(tmp, fname), "wb") as f:
                f.write(data)
            xml = (f'<mujoco model="v"><compiler meshdir="{tmp}"/><asset><mesh name="m" file="{fname}"/></asset>'
                   f'<worldbody><body name="b"><freejoint/><geom name="g" type="mesh" mesh="m"/></body>'
                   f'</worldbody></mujoco>')
            record(f"mesh_{fname}", f"a mesh file {fname}", lambda xml=xml: compile_xml(xml))
            cases[-1]["file"] = fname
            cases[-1]["bytes_hex"] = data.hex() if fname.endswith(".msh") else None
            cases[-1]["text"] = data.decode() if fname.endswith(".obj") else None
            if cases[-1]["error"]:
                cases[-1]["error"] = cases[-1]["error"].replace(tmp, "<dir>")
    return {"cases": cases}


FIXTURES = {
    "contact_params": make_contact_params,
    "contact_filter": make_contact_filter,
    "friction_outcomes": make_friction_outcomes,
    "friction_rates": make_friction_rates,
    "mesh_contact_sets": make_mesh_contact_sets,
    "validation_errors": make_validation_errors,
}


def main():
    # MuJoCo appends its warnings to MUJOCO_LOG.TXT in the working directory (the rejected
    # models write some): run in a scratch directory so that none lands in the repository.
    os.chdir(tempfile.mkdtemp(prefix="mujoco_contact_semantics_"))
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=sorted(FIXTURES))
    args = ap.parse_args()
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, fn in FIXTURES.items():
        if args.only and name != args.only:
            continue
        data = {"generator": "tools/reference/mujoco_contact_semantics.py", "mujoco_version": mujoco.__version__}
        data.update(fn())
        path = os.path.join(OUT_DIR, name + ".json")
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        print(f"wrote {os.path.relpath(path, REPO)} ({os.path.getsize(path) // 1024} KiB)")


if __name__ == "__main__":
    main()
