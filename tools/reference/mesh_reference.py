#!/usr/bin/env python3
"""Mesh and heightfield fixtures for tests/test_mesh_asset.cpp and the MuJoCo oracle.

Two parts:
  --geometry  writes the small asset files under tests/data/meshes (standard library only):
              an offset box (OBJ with quads, ASCII STL and binary STL), a tetrahedron, a
              non-convex L-shaped prism (hull known), a flat square (an error case), and an
              8-bit grey PNG heightfield.
  (default)   compiles tests/data/meshes/mesh_scene.xml with the PyPI `mujoco` package and writes
              what MuJoCo's compiler made of it to tests/data/meshes/mesh_scene_mujoco.json: body
              mass, centre of mass and inertia tensor (body axes), geom type/pos/quat/size, per
              mesh the convex hull's vertex count, per hfield size/nrow/ncol/data. The tests read
              the JSON, never the wheel.

Setup (the venv is not committed):
    python3 -m venv /work/.venv-mujoco-mesh && /work/.venv-mujoco-mesh/bin/pip install mujoco numpy
Run from the repository root:
    python3 tools/reference/mesh_reference.py --geometry
    /work/.venv-mujoco-mesh/bin/python tools/reference/mesh_reference.py
"""

import argparse
import json
import os
import struct
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "tests", "data", "meshes")

# Box [0, 2] x [0, 1] x [0, 0.5]: volume 1, centre (1, 0.5, 0.25).
BOX_LO, BOX_HI = (0.0, 0.0, 0.0), (2.0, 1.0, 0.5)
# L profile (counter-clockwise seen from +z), extruded over z in [0, 1]: area 3, hull area 3.5.
L_PROFILE = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]


def box_corners():
    (x0, y0, z0), (x1, y1, z1) = BOX_LO, BOX_HI
    return [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
            (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]


# Outward counter-clockwise quads of the box corners above (0-based).
BOX_QUADS = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]


def write_obj(path, verts, faces, comment):
    with open(path, "w") as f:
        f.write(f"# {comment}\n")
        for v in verts:
            f.write("v %g %g %g\n" % tuple(v))
        for face in faces:
            f.write("f " + " ".join(str(i + 1) for i in face) + "\n")


def triangles(faces):
    for face in faces:
        for k in range(1, len(face) - 1):
            yield face[0], face[k], face[k + 1]


def normal(a, b, c):
    u = [b[i] - a[i] for i in range(3)]
    w = [c[i] - a[i] for i in range(3)]
    n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]]
    s = sum(x * x for x in n) ** 0.5
    return [x / s for x in n]


def write_stl_ascii(path, verts, faces):
    with open(path, "w") as f:
        f.write("solid box\n")
        for t in triangles(faces):
            p = [verts[i] for i in t]
            f.write("  facet normal %g %g %g\n    outer loop\n" % tuple(normal(*p)))
            for v in p:
                f.write("      vertex %g %g %g\n" % tuple(v))
            f.write("    endloop\n  endfacet\n")
        f.write("endsolid box\n")


def write_stl_binary(path, verts, faces):
    tris = list(triangles(faces))
    with open(path, "wb") as f:
        f.write(b"sap test box (binary STL)".ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        for t in tris:
            p = [verts[i] for i in t]
            f.write(struct.pack("<3f", *normal(*p)))
            for v in p:
                f.write(struct.pack("<3f", *v))
            f.write(struct.pack("<H", 0))


def l_prism():
    n = len(L_PROFILE)
    verts = [(x, y, 0.0) for x, y in L_PROFILE] + [(x, y, 1.0) for x, y in L_PROFILE]
    # Caps: the L split into two convex quads (0, 1, 2, 3) and (0, 3, 4, 5).
    top = [(n + 0, n + 1, n + 2, n + 3), (n + 0, n + 3, n + 4, n + 5)]
    bottom = [(0, 3, 2, 1), (0, 5, 4, 3)]
    sides = [(i, (i + 1) % n, n + (i + 1) % n, n + i) for i in range(n)]
    return verts, top + bottom + sides


def write_png_grey(path, rows):
    """8-bit greyscale PNG, rows top to bottom."""
    h, w = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(r) for r in rows)

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw)))
        f.write(chunk(b"IEND", b""))


# Grey levels of the heightfield image (3 rows x 4 columns, top row first).
HFIELD_ROWS = [[0, 51, 102, 153], [204, 255, 0, 51], [102, 153, 204, 255]]


def write_geometry():
    os.makedirs(DATA, exist_ok=True)
    v = box_corners()
    write_obj(os.path.join(DATA, "box.obj"), v, BOX_QUADS, "box [0,2]x[0,1]x[0,0.5], outward quads")
    write_stl_ascii(os.path.join(DATA, "box_ascii.stl"), v, BOX_QUADS)
    write_stl_binary(os.path.join(DATA, "box_binary.stl"), v, BOX_QUADS)
    tet = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    write_obj(os.path.join(DATA, "tetra.obj"), tet, [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)],
              "unit corner tetrahedron, volume 1/6")
    lv, lf = l_prism()
    write_obj(os.path.join(DATA, "lshape.obj"), lv, lf, "L-shaped prism, volume 3, hull volume 3.5")
    write_obj(os.path.join(DATA, "flat.obj"), [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)], [(0, 1, 2, 3)],
              "flat square: no volume, no hull")
    write_png_grey(os.path.join(DATA, "hfield.png"), HFIELD_ROWS)


def floats(a):
    import numpy as np
    return [float(x) for x in np.asarray(a).ravel()]


def write_oracle():
    import mujoco
    import numpy as np

    path = os.path.join(DATA, "mesh_scene.xml")
    m = mujoco.MjModel.from_xml_path(path)
    out = {"model": "tests/data/meshes/mesh_scene.xml", "mujoco": mujoco.__version__, "bodies": [], "geoms": [],
           "meshes": [], "hfields": []}
    for b in range(1, m.nbody):
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, m.body_iquat[b])
        R = R.reshape(3, 3)
        inertia = R @ np.diag(m.body_inertia[b]) @ R.T
        out["bodies"].append({"name": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b),
                              "mass": float(m.body_mass[b]), "ipos": floats(m.body_ipos[b]),
                              "inertia": [inertia[0, 0], inertia[1, 1], inertia[2, 2],
                                          inertia[0, 1], inertia[0, 2], inertia[1, 2]]})
    for g in range(m.ngeom):
        out["geoms"].append({"name": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or "",
                             "type": int(m.geom_type[g]), "body": int(m.geom_bodyid[g]),
                             "dataid": int(m.geom_dataid[g]), "pos": floats(m.geom_pos[g]),
                             "quat": floats(m.geom_quat[g]), "size": floats(m.geom_size[g])})
    for i in range(m.nmesh):
        graph = m.mesh_graph[m.mesh_graphadr[i]:] if m.mesh_graphadr[i] >= 0 else None
        out["meshes"].append({"name": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_MESH, i),
                              "hull_vertices": int(graph[0]) if graph is not None else -1,
                              "hull_faces": int(graph[1]) if graph is not None else -1,
                              "vertices": int(m.mesh_vertnum[i])})
    for i in range(m.nhfield):
        a, n = m.hfield_adr[i], m.hfield_nrow[i] * m.hfield_ncol[i]
        out["hfields"].append({"name": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_HFIELD, i),
                               "size": floats(m.hfield_size[i]), "nrow": int(m.hfield_nrow[i]),
                               "ncol": int(m.hfield_ncol[i]), "data": floats(m.hfield_data[a:a + n])})
    dst = os.path.join(DATA, "mesh_scene_mujoco.json")
    with open(dst, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--geometry", action="store_true", help="write the asset files (no MuJoCo needed)")
    args = ap.parse_args()
    if args.geometry:
        write_geometry()
    else:
        write_oracle()


if __name__ == "__main__":
    main()
