#!/usr/bin/env python3
"""Write MuJoCo contact oracles for the convex narrow phase (tests/test_collision_convex.cpp).

For pairs of geoms (mesh-mesh, mesh-plane, mesh-box, cylinder-box, cylinder-cylinder,
ellipsoid-plane/sphere/box, hfield-sphere/box/mesh) in several poses, MuJoCo's mj_collision
(multiccd enabled) gives the contacts; the fixture stores what MuJoCo compiled (the geoms' world
poses d.geom_xpos / geom_xmat, sizes, the convex hull of each mesh as vertices in the mesh frame
plus its hull triangles from mesh_graph, heightfield data) and every contact (geom ids, dist,
pos, normal = frame[0:3] from geom[0] to geom[1]). Poses: a resting face contact where the pair
has one, and random orientations with the second geom pushed along a random direction until
MuJoCo's deepest contact reaches a target signed distance (bisection), penetrating (-5 mm) and
separated inside the margin (+4 mm, margin 1 cm). Each case also records whether MuJoCo's own
deepest contact is self-consistent (moving geom 1 by depth + 1 mm along its normal separates the
pair in MuJoCo); the test compares depths and normals only where it is.

Setup (the venv is outside the repository):
    python3 -m venv /work/venvs/mjconvex && /work/venvs/mjconvex/bin/pip install mujoco numpy
Run from the repository root:
    /work/venvs/mjconvex/bin/python tools/reference/mujoco_contacts.py              # writes the fixture
    /work/venvs/mjconvex/bin/python tools/reference/mujoco_contacts.py --bench      # timeit of mj_collision
"""

import argparse
import json
import os
import timeit

import mujoco
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "tests", "data", "mujoco", "convex_contacts.json")
MARGIN = 0.01


def fibonacci_sphere(n, r):
    i = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * i / n)
    th = np.pi * (1 + 5**0.5) * i
    return r * np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], 1)


MESHES = {
    "cube": np.array([[sx, sy, sz] for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)]) * 0.1,
    "slab": np.array([[sx * 0.15, sy * 0.1, sz * 0.04] for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)]),
    "octa": np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]) * 0.12,
    "poly": fibonacci_sphere(24, 0.1) * np.array([1.2, 1.0, 0.8]),
}


def hfield_data(nrow, ncol):
    y, x = np.meshgrid(np.linspace(-1, 1, nrow), np.linspace(-1, 1, ncol), indexing="ij")
    z = 0.5 + 0.3 * np.sin(2.5 * x) * np.cos(1.7 * y) + 0.2 * x * y
    z = (z - z.min()) / (z.max() - z.min())  # MuJoCo normalizes to [0, 1]; give it normalized
    return z


HF = {"nrow": 12, "ncol": 10, "size": [1.0, 0.8, 0.1, 0.05]}


def geom_xml(kind, name, extra=""):
    if kind in MESHES:
        return f'<geom name="{name}" type="mesh" mesh="{kind}" {extra}/>'
    return f'<geom name="{name}" {kind} {extra}/>'


def model_xml(g0, g1, static0):
    """g0/g1: (kind, xml attrs). static0: geom 0 is fixed in the world (plane, hfield)."""
    assets = "".join(
        f'<mesh name="{k}" vertex="{" ".join(f"{c:.17g}" for c in v.ravel())}"/>' for k, v in MESHES.items())
    hf = hfield_data(HF["nrow"], HF["ncol"])
    assets += (f'<hfield name="hf" nrow="{HF["nrow"]}" ncol="{HF["ncol"]}" size="{" ".join(map(str, HF["size"]))}" '
               f'elevation="{" ".join(f"{v:.17g}" for v in hf.ravel())}"/>')
    g0_xml = geom_xml(g0[0], "g0", f'margin="{MARGIN}"')
    b0 = g0_xml if static0 else f'<body name="b0"><freejoint/>{g0_xml}</body>'
    b1 = f'<body name="b1"><freejoint/>{geom_xml(g1[0], "g1")}</body>'
    return (f'<mujoco><option><flag multiccd="enable" gravity="disable"/></option><asset>{assets}</asset>'
            f'<worldbody>{b0}{b1}</worldbody></mujoco>')


KINDS = {
    "plane": 'type="plane" size="3 3 0.1"',
    "hfield": 'type="hfield" hfield="hf"',
    "sphere": 'type="sphere" size="0.08"',
    "box": 'type="box" size="0.12 0.09 0.07"',
    "cylinder": 'type="cylinder" size="0.06 0.09"',
    "cylinder2": 'type="cylinder" size="0.05 0.12"',
    "ellipsoid": 'type="ellipsoid" size="0.12 0.08 0.06"',
}


def kind_attr(k):
    return (k, KINDS.get(k, ""))


def to_xml_kind(k):
    return KINDS[k] if k in KINDS else k


def quat_random(rng):
    q = rng.standard_normal(4)
    return q / np.linalg.norm(q)


def quat_axis(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


class Pair:
    def __init__(self, k0, k1):
        self.k0, self.k1 = k0, k1
        self.static0 = k0 in ("plane", "hfield")
        xml = model_xml((k0 if k0 in MESHES else to_xml_kind(k0),), (k1 if k1 in MESHES else to_xml_kind(k1),),
                        self.static0)
        # geom_xml takes the attribute string for primitives
        self.m = mujoco.MjModel.from_xml_string(xml)
        self.d = mujoco.MjData(self.m)

    def set(self, p0, q0, p1, q1):
        qp = self.d.qpos
        if self.static0:
            qp[0:3], qp[3:7] = p1, q1
        else:
            qp[0:3], qp[3:7], qp[7:10], qp[10:14] = p0, q0, p1, q1
        mujoco.mj_kinematics(self.m, self.d)
        mujoco.mj_collision(self.m, self.d)

    def min_dist(self):
        return min((c.dist for c in self.d.contact[: self.d.ncon]), default=np.inf)

    def push_to(self, p0, q0, q1, u, target):
        """Bisection on t: geom 1 at p0 + t u; MuJoCo's deepest contact reaches dist = target."""
        lo, hi = 0.0, 1.0
        self.set(p0, q0, p0 + hi * u, q1)
        if self.min_dist() < np.inf:
            return None
        for _ in range(60):
            t = 0.5 * (lo + hi)
            self.set(p0, q0, p0 + t * u, q1)
            if self.min_dist() < target:
                lo = t
            else:
                hi = t
        self.set(p0, q0, p0 + lo * u, q1)
        return lo

    def record(self, name):
        m, d = self.m, self.d
        geoms = []
        for g in range(m.ngeom):
            t = m.geom_type[g]
            e = {"type": mujoco.mjtGeom(t).name[len("mjGEOM_"):].lower(), "size": m.geom_size[g].tolist(),
                 "pos": d.geom_xpos[g].tolist(), "mat": d.geom_xmat[g].tolist()}
            if t == mujoco.mjtGeom.mjGEOM_MESH:
                mid = m.geom_dataid[g]
                adr, num = m.mesh_vertadr[mid], m.mesh_vertnum[mid]
                vert = m.mesh_vert[adr: adr + num].astype(float)
                gadr = m.mesh_graphadr[mid]
                nv, nf = m.mesh_graph[gadr], m.mesh_graph[gadr + 1]
                end = m.mesh_graphadr[mid + 1] if mid + 1 < m.nmesh else len(m.mesh_graph)
                faces = m.mesh_graph[end - 3 * nf: end].reshape(nf, 3).tolist()
                hull = m.mesh_graph[gadr + 2 + nv: gadr + 2 + 2 * nv].tolist()  # vert_globalid
                # Hull triangles oriented outward (about the hull's centroid).
                c = vert[hull].mean(0)
                for f in faces:
                    a, b, cc = vert[f[0]], vert[f[1]], vert[f[2]]
                    if np.dot(np.cross(b - a, cc - a), a - c) < 0:
                        f[1], f[2] = f[2], f[1]
                e["vert"] = vert.ravel().tolist()
                e["face"] = [i for f in faces for i in f]
            if t == mujoco.mjtGeom.mjGEOM_HFIELD:
                h = m.geom_dataid[g]
                adr = m.hfield_adr[h]
                n = m.hfield_nrow[h] * m.hfield_ncol[h]
                e["nrow"], e["ncol"] = int(m.hfield_nrow[h]), int(m.hfield_ncol[h])
                e["hfield_size"] = m.hfield_size[h].tolist()
                e["data"] = m.hfield_data[adr: adr + n].astype(float).tolist()
            e["margin"] = float(m.geom_margin[g])
            geoms.append(e)
        contacts = [{"geom": [int(c.geom[0]), int(c.geom[1])], "dist": float(c.dist), "pos": c.pos.tolist(),
                     "normal": c.frame[:3].tolist()} for c in d.contact[: d.ncon]]
        # Self-consistency of MuJoCo's answer: moving geom 1 by (depth + 1 mm) along the deepest
        # contact's normal must separate the pair (the normal of a minimum translation does).
        deep = min(contacts, key=lambda c: c["dist"])
        consistent = True
        if deep["dist"] < 0:
            qpos = d.qpos.copy()
            sign = 1.0 if deep["geom"][1] == 1 else -1.0
            adr = 0 if self.static0 else 7
            d.qpos[adr: adr + 3] += sign * (-deep["dist"] + 1e-3) * np.array(deep["normal"])
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
            consistent = self.min_dist() > 0
            d.qpos[:] = qpos
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
        return {"name": name, "geoms": geoms, "contacts": contacts, "mujoco_separates": consistent,
                "qpos": d.qpos.tolist()}


PAIRS = [("cube", "cube"), ("poly", "octa"), ("slab", "poly"), ("plane", "cube"), ("plane", "poly"),
         ("box", "cube"), ("box", "octa"), ("box", "cylinder"), ("cylinder", "cylinder2"), ("plane", "ellipsoid"),
         ("sphere", "ellipsoid"), ("box", "ellipsoid"), ("hfield", "sphere"), ("hfield", "box"), ("hfield", "cube")]


def make_cases():
    rng = np.random.default_rng(18)
    cases = []
    for k0, k1 in PAIRS:
        pair = Pair(k0, k1)
        up = np.array([0, 0, 1.0])
        # Resting: geom 1 above geom 0 (identity or yawed), pushed down to -5 mm (face contacts).
        for i, yaw in enumerate([0.0, 0.5]):
            q0 = np.array([1.0, 0, 0, 0])
            q1 = quat_axis([0, 0, 1], yaw)
            base = np.array([0.1, -0.05, 0.0]) if k0 == "hfield" else np.zeros(3)
            start = base + np.array([0, 0, 0.6])
            # push down from above: geom 1 at start - t up
            lo, hi = 0.0, 0.6
            for _ in range(60):
                t = 0.5 * (lo + hi)
                pair.set(np.zeros(3), q0, start - t * up, q1)
                if pair.min_dist() < -0.005:
                    hi = t
                else:
                    lo = t
            pair.set(np.zeros(3), q0, start - hi * up, q1)
            if pair.d.ncon:
                cases.append(pair.record(f"{k0}-{k1} resting {i}"))
        # Random orientations, approached along a random direction (upper half for terrain).
        for i in range(4):
            q0 = quat_random(rng) if not pair.static0 else np.array([1.0, 0, 0, 0])
            q1 = quat_random(rng)
            u = rng.standard_normal(3)
            if pair.static0:
                u[2] = abs(u[2]) + 1.0
            u /= np.linalg.norm(u)
            p0 = np.zeros(3)
            if k0 == "hfield":
                p0 = np.array([rng.uniform(-0.5, 0.5), rng.uniform(-0.4, 0.4), 0.0])
            target = -0.005 if i < 3 else 0.004
            if pair.push_to(p0, q0, q1, u, target) is None:
                continue
            # push_to placed geom 1 from p0 outwards: geom 1 approaches from direction u
            if pair.d.ncon:
                cases.append(pair.record(f"{k0}-{k1} random {i} target {target}"))
    return cases


def bench(calls=20000):
    """Time per mj_collision call on the fixture's cases that sap_collision_bench times."""
    with open(OUT) as f:
        fx = json.load(f)
    print(f"{'case':40s} {'contacts':>8s} {'mj_collision us':>16s}   (MuJoCo {mujoco.__version__})")
    for c in fx["cases"]:
        name = c["name"]
        if "random 0" not in name and "resting 1" not in name:
            continue
        k0, k1 = name.split(" ")[0].split("-")
        pair = Pair(k0, k1)
        pair.d.qpos[:] = c["qpos"]
        mujoco.mj_kinematics(pair.m, pair.d)
        mujoco.mj_collision(pair.m, pair.d)
        m, d = pair.m, pair.d
        t = min(timeit.repeat(lambda: mujoco.mj_collision(m, d), number=calls // 5, repeat=5)) / (calls // 5)
        print(f"{name:40s} {d.ncon:8d} {t * 1e6:16.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="store_true")
    args = ap.parse_args()
    if args.bench:
        bench()
        return
    cases = make_cases()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"mujoco_version": mujoco.__version__, "margin": MARGIN, "cases": cases}, f, indent=None)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, REPO)}")


if __name__ == "__main__":
    main()
