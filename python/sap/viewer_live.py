"""Live viewing in viser (PyPI ``viser``; docs/python.md#viewer).

    viewer = LiveViewer(sim, worlds=[0, 1])   # serves http://localhost:8080
    for _ in range(1000):
        sim.step(); viewer.update()           # body frames from the zero-copy pose views

    replay(traj)                             # a recorded trajectory (.saptraj) with a time slider

Each body is a viser frame ``/world{i}/body{b}`` whose geoms are children with their local
poses; contacts (points and force segments) are drawn per update when ``contacts`` is on.
"""
from __future__ import annotations

import numpy as np

try:
    import viser
except ImportError as e:  # pragma: no cover
    raise ImportError("sap.viewer_live needs viser (pip install viser, or tools/setup_python.sh --viser)") from e

from . import viewer as _viewer

_COLORS = [(224, 122, 44), (60, 141, 222), (92, 184, 92), (217, 83, 79), (155, 89, 182), (240, 196, 25)]
SPACING = 2.0  # worlds side by side along y, as in the HTML viewer


def _add_geoms(server, geoms, nbody, nworld, frames):
    """Adds every drawable geom under its body's frame (body 0: the world, once per world)."""
    for g, t in enumerate(geoms["type_name"]):
        size = geoms["size"][3 * g:3 * g + 3]
        pos = tuple(geoms["pos"][3 * g:3 * g + 3])
        wxyz = tuple(geoms["quat"][4 * g:4 * g + 4])
        b = geoms["bodyid"][g]
        for w in range(nworld):
            parent = frames[w][b]
            name = f"{parent}/geom{g}"
            color = (85, 96, 112) if b == 0 else _COLORS[(b + 2 * w) % len(_COLORS)]
            kw = dict(position=pos, wxyz=wxyz, color=color)
            if t == "sphere":
                server.scene.add_icosphere(name, radius=size[0], **kw)
            elif t == "box":
                server.scene.add_box(name, dimensions=(2 * size[0], 2 * size[1], 2 * size[2]), **kw)
            elif t in ("capsule", "cylinder"):
                server.scene.add_cylinder(name, radius=size[0], height=2 * size[1], **kw)
                if t == "capsule":
                    for e in (-1, 1):
                        server.scene.add_icosphere(f"{name}/cap{e}", radius=size[0], color=color,
                                                   position=(0.0, 0.0, e * size[1]))
            elif t == "ellipsoid":
                server.scene.add_icosphere(name, radius=1.0, scale=tuple(size), **kw)
            elif t == "plane":
                server.scene.add_grid(name, width=2 * size[0] if size[0] > 0 else 20,
                                      height=2 * size[1] if size[1] > 0 else 20, position=pos, wxyz=wxyz)


class _Scene:
    def __init__(self, server, header, nworld):
        self.server = server
        self.nbody = header["nbody"]
        self.nworld = nworld
        self.frames = [[f"/world{w}" if b == 0 else f"/world{w}/body{b}" for b in range(self.nbody)]
                       for w in range(nworld)]
        self.handles = []
        for w in range(nworld):
            server.scene.add_frame(f"/world{w}", show_axes=False, position=(0.0, SPACING * w, 0.0))
            self.handles.append([None] + [server.scene.add_frame(self.frames[w][b], show_axes=False)
                                          for b in range(1, self.nbody)])
        _add_geoms(server, header["geoms"], self.nbody, nworld, self.frames)

    def set_poses(self, pos, quat):
        """pos (nworld, nbody, 3), quat (nworld, nbody, 4) in world coordinates of each world."""
        for w in range(self.nworld):
            for b in range(1, self.nbody):
                h = self.handles[w][b]
                h.position = tuple(float(x) for x in pos[w, b])
                h.wxyz = tuple(float(x) for x in quat[w, b])

    def set_contacts(self, points, forces, scale):
        if len(points) == 0:
            points, forces = np.zeros((1, 3)), np.zeros((1, 3))
        self.server.scene.add_point_cloud("/contacts/points", points=np.asarray(points, np.float32),
                                          colors=(255, 32, 32), point_size=0.02)
        seg = np.stack([points, points + scale * np.asarray(forces)], axis=1).astype(np.float32)
        self.server.scene.add_line_segments("/contacts/forces", points=seg, colors=(255, 238, 0), thickness=0.005)


class LiveViewer:
    """Shows worlds of a running simulator; call :meth:`update` after stepping."""

    def __init__(self, sim, worlds=(0,), contacts=True, server=None, port=8080, force_scale=1e-3):
        self.sim = sim
        self.worlds = [int(w) for w in worlds]
        self.contacts = contacts
        self.force_scale = force_scale
        self.server = server or viser.ViserServer(port=port, verbose=False)
        header = {"nbody": sim.nbody, "geoms": sim.scene.geoms()}
        self.scene = _Scene(self.server, header, len(self.worlds))
        self.body_pos = np.asarray(sim.body_pos)
        self.body_quat = np.asarray(sim.body_quat)
        self.update()

    def update(self):
        pos = self.body_pos[self.worlds]
        self.scene.set_poses(pos, self.body_quat[self.worlds])
        if self.contacts:
            pts, frc = [], []
            for i, w in enumerate(self.worlds):
                c = self.sim.contacts(w)
                p = np.asarray(c["point"]).reshape(-1, 3) + np.array([0.0, SPACING * i, 0.0])
                pts.append(p)
                frc.append(np.asarray(c["force"]).reshape(-1, 3))
            self.scene.set_contacts(np.concatenate(pts), np.concatenate(frc), self.force_scale)
        return pos


def replay(traj, server=None, port=8080):
    """Serves a recorded trajectory (dict or .saptraj path) with a frame slider; returns the
    server and a function show(frame)."""
    if not isinstance(traj, dict):
        traj = _viewer.load(traj)
    h = traj["header"]
    server = server or viser.ViserServer(port=port, verbose=False)
    nw = len(h["worlds"])
    scene = _Scene(server, h, nw)
    off = traj["contact_offset"]
    fmax = float(np.linalg.norm(traj["contact_force"], axis=1).max()) if len(traj["contact_force"]) else 1.0
    slider = server.gui.add_slider("frame", min=0, max=max(0, h["nframe"] - 1), step=1, initial_value=0)
    show_contacts = server.gui.add_checkbox("contacts & forces", initial_value=True)

    def show(f):
        scene.set_poses(traj["body_pos"][f], traj["body_quat"][f])
        if show_contacts.value:
            pts, frc = [], []
            for i in range(nw):
                a, b = off[f * nw + i], off[f * nw + i + 1]
                pts.append(traj["contact_point"][a:b] + np.array([0.0, SPACING * i, 0.0], np.float32))
                frc.append(traj["contact_force"][a:b])
            scene.set_contacts(np.concatenate(pts), np.concatenate(frc), 0.3 / max(fmax, 1e-9))

    slider.on_update(lambda _: show(int(slider.value)))
    if h["nframe"]:
        show(0)
    return server, show
