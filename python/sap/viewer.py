"""Trajectory recording and viewing (docs/python.md#viewer).

* :class:`Recorder` records selected worlds of a :class:`sap.Simulator` frame by frame: body poses
  and, optionally, the last step's contacts (points and forces).
* :func:`save` / :func:`load`: the compact trajectory file (``.saptraj``, format below).
* :func:`to_html`: a self-contained HTML page (three.js from Debian ``libjs-three`` inlined, the
  trajectory embedded) with a time slider, play/pause and a contacts/forces toggle.
* :func:`view_live` (``viewer_live.py``): the same scene live in viser.

File format ``.saptraj`` (little-endian)::

    8 bytes   magic b"SAPTRAJ1"
    uint32    n, the length of the JSON header
    n bytes   JSON header (UTF-8): {"version": 1, "dt": seconds per frame, "worlds": [...],
              "nframe", "nbody", "body_names", "geoms": {"type_name", "bodyid", "pos", "quat",
              "size"}, "arrays": [{"name", "dtype", "shape", "offset"}, ...]}
    blobs     the arrays named in "arrays", each at byte `offset` from the end of the header:
              body_pos   float32 (nframe, nworld, nbody, 3)
              body_quat  float32 (nframe, nworld, nbody, 4)   (w, x, y, z)
              contact_offset int32 (nframe * nworld + 1,)     contact k of (frame f, world i) is
                         entry contact_offset[f * nworld + i] + k of the two arrays below
              contact_point  float32 (ncontact, 3)
              contact_force  float32 (ncontact, 3)            N, on the second body of the pair

A 17-body humanoid costs 476 bytes per world and frame (poses), plus 24 bytes per contact.
"""
from __future__ import annotations

import base64
import json
import pathlib
import struct

import numpy as np

MAGIC = b"SAPTRAJ1"
THREE_JS = pathlib.Path("/usr/share/javascript/three/three.min.js")


class Recorder:
    """Records worlds ``worlds`` of ``sim`` each time :meth:`record` is called."""

    def __init__(self, sim, worlds=(0,), contacts=True):
        self.sim = sim
        self.worlds = [int(w) for w in worlds]
        self.contacts = bool(contacts)
        self.body_pos = np.asarray(sim.body_pos)
        self.body_quat = np.asarray(sim.body_quat)
        scene = sim.scene
        self.header = {"version": 1, "worlds": self.worlds, "nbody": scene.nbody,
                       "body_names": list(scene.body_names), "geoms": scene.geoms()}
        self.frames_pos, self.frames_quat = [], []
        self.offsets, self.points, self.forces = [0], [], []

    def record(self):
        self.frames_pos.append(self.body_pos[self.worlds].astype(np.float32))
        self.frames_quat.append(self.body_quat[self.worlds].astype(np.float32))
        for w in self.worlds:
            n = 0
            if self.contacts:
                c = self.sim.contacts(w)
                p = np.asarray(c["point"], np.float32).reshape(-1, 3)
                self.points.append(p)
                self.forces.append(np.asarray(c["force"], np.float32).reshape(-1, 3))
                n = len(p)
            self.offsets.append(self.offsets[-1] + n)

    def trajectory(self, dt=None):
        """The recording as a dict (the contents of a .saptraj file)."""
        h = dict(self.header, nframe=len(self.frames_pos), dt=float(dt if dt is not None else self.sim.dt))
        empty3 = np.zeros((0, 3), np.float32)
        return {"header": h,
                "body_pos": np.stack(self.frames_pos) if self.frames_pos else np.zeros((0, len(self.worlds), h["nbody"], 3), np.float32),
                "body_quat": np.stack(self.frames_quat) if self.frames_quat else np.zeros((0, len(self.worlds), h["nbody"], 4), np.float32),
                "contact_offset": np.asarray(self.offsets, np.int32),
                "contact_point": np.concatenate(self.points) if self.points else empty3,
                "contact_force": np.concatenate(self.forces) if self.forces else empty3}


ARRAYS = [("body_pos", "<f4"), ("body_quat", "<f4"), ("contact_offset", "<i4"),
          ("contact_point", "<f4"), ("contact_force", "<f4")]


def _pack(traj):
    header = dict(traj["header"])
    blobs, arrays, offset = [], [], 0
    for name, dt in ARRAYS:
        a = np.ascontiguousarray(traj[name], dtype=dt)
        arrays.append({"name": name, "dtype": dt, "shape": list(a.shape), "offset": offset})
        blobs.append(a.tobytes())
        offset += len(blobs[-1])
    header["arrays"] = arrays
    return json.dumps(header).encode(), b"".join(blobs)


def save(traj, path):
    """Writes a trajectory (Recorder.trajectory()) as a .saptraj file."""
    head, body = _pack(traj)
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<I", len(head)) + head + body)


def load(path):
    """Reads a .saptraj file into the dict written by :func:`save`. Errors name the file."""
    data = pathlib.Path(path).read_bytes()
    if data[:8] != MAGIC or len(data) < 12:
        raise ValueError(f"{path}: not a sap trajectory (expected magic {MAGIC!r})")
    (n,) = struct.unpack("<I", data[8:12])
    try:
        header = json.loads(data[12:12 + n])
    except ValueError as e:
        raise ValueError(f"{path}: header: {e}") from None
    base = 12 + n
    out = {"header": header}
    for a in header["arrays"]:
        count = int(np.prod(a["shape"])) if a["shape"] else 1
        size = count * np.dtype(a["dtype"]).itemsize
        start = base + a["offset"]
        if start + size > len(data):
            raise ValueError(f"{path}: array {a['name']}: file truncated ({len(data)} bytes, need {start + size})")
        out[a["name"]] = np.frombuffer(data, a["dtype"], count, start).reshape(a["shape"])
    return out


def to_html(traj, path, title="sap trajectory", three_js=THREE_JS):
    """Writes a self-contained HTML page viewing `traj` (a dict or a .saptraj path)."""
    if isinstance(traj, (str, pathlib.Path)):
        traj = load(traj)
    three_js = pathlib.Path(three_js)
    if not three_js.exists():
        raise FileNotFoundError(f"{three_js}: three.js not found (Debian package libjs-three)")
    head, body = _pack(traj)
    page = _TEMPLATE.replace("/*THREE_JS*/", three_js.read_text().replace("</script", "<\\/script"))
    page = page.replace("__TITLE__", title).replace("__HEADER__", head.decode())
    page = page.replace("__DATA__", base64.b64encode(body).decode())
    pathlib.Path(path).write_text(page)
    return path


_TEMPLATE = r"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { margin: 0; background: #20242c; color: #ddd; font: 13px sans-serif; overflow: hidden; }
#bar { position: absolute; left: 0; right: 0; bottom: 0; padding: 6px 10px; background: rgba(0,0,0,0.5);
       display: flex; gap: 10px; align-items: center; }
#time { flex: 1; }
</style></head>
<body data-status="loading">
<div id="bar"><button id="play">pause</button><input id="time" type="range" min="0" value="0">
<span id="label"></span><label><input id="contacts" type="checkbox" checked> contacts &amp; forces</label></div>
<div id="errors" style="display:none"></div>
<script>
window.addEventListener("error", function (e) {
  var d = document.getElementById("errors"); d.textContent += "ERROR " + e.message + "\n";
  document.body.setAttribute("data-status", "error");
});
var consoleError = console.error;
console.error = function () {  // recorded in the page too, for the headless test
  document.getElementById("errors").textContent += "ERROR " + Array.prototype.join.call(arguments, " ") + "\n";
  document.body.setAttribute("data-status", "error");
  consoleError.apply(console, arguments);
};
</script>
<script>/*THREE_JS*/</script>
<script>
(function () {
var H = __HEADER__;
var raw = atob("__DATA__"), bytes = new Uint8Array(raw.length);
for (var i = 0; i < raw.length; ++i) bytes[i] = raw.charCodeAt(i);
var A = {};
H.arrays.forEach(function (a) {
  var n = a.shape.reduce(function (x, y) { return x * y; }, 1);
  var buf = bytes.buffer.slice(a.offset, a.offset + n * 4);
  A[a.name] = a.dtype === "<i4" ? new Int32Array(buf) : new Float32Array(buf);
});
var nframe = H.nframe, nw = H.worlds.length, nbody = H.nbody;
var renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
renderer.setSize(window.innerWidth, window.innerHeight);
renderer.setClearColor(0x20242c);
document.body.appendChild(renderer.domElement);
var scene = new THREE.Scene();
var camera = new THREE.PerspectiveCamera(45, window.innerWidth / window.innerHeight, 0.01, 200);
camera.up.set(0, 0, 1);
scene.add(new THREE.HemisphereLight(0xffffff, 0x404050, 0.8));
var sun = new THREE.DirectionalLight(0xffffff, 0.6); sun.position.set(3, -4, 6); scene.add(sun);
var colors = [0xe07a2c, 0x3c8dde, 0x5cb85c, 0xd9534f, 0x9b59b6, 0xf0c419];
var spacing = 2.0;  // worlds side by side along y
var bodies = [];    // [world][body] -> Object3D
var center = new THREE.Vector3(), extent = 0.5;
for (var w = 0; w < nw; ++w) {
  var row = [];
  for (var b = 0; b < nbody; ++b) { var o = new THREE.Group(); scene.add(o); row.push(o); }
  bodies.push(row);
}
var G = H.geoms, skipped = {};
for (var g = 0; g < G.type_name.length; ++g) {
  var t = G.type_name[g], s = G.size.slice(3 * g, 3 * g + 3), geo = null, parts = [];
  if (t === "sphere") geo = new THREE.SphereGeometry(s[0], 20, 14);
  else if (t === "box") geo = new THREE.BoxGeometry(2 * s[0], 2 * s[1], 2 * s[2]);
  else if (t === "ellipsoid") { geo = new THREE.SphereGeometry(1, 20, 14); geo.scale(s[0], s[1], s[2]); }
  else if (t === "cylinder" || t === "capsule") {
    geo = new THREE.CylinderGeometry(s[0], s[0], 2 * s[1], 20); geo.rotateX(Math.PI / 2);
    if (t === "capsule") for (var e = -1; e <= 1; e += 2) {
      var cap = new THREE.SphereGeometry(s[0], 16, 10); cap.translate(0, 0, e * s[1]); parts.push(cap);
    }
  } else if (t === "plane") {
    var sz = s[0] > 0 ? 2 * s[0] : 20; geo = new THREE.PlaneGeometry(sz, sz, 20, 20);
  } else { skipped[t] = (skipped[t] || 0) + 1; continue; }
  parts.unshift(geo);
  var bid = G.bodyid[g];
  for (var w = 0; w < nw; ++w) {
    var mat = t === "plane" ? new THREE.MeshLambertMaterial({color: 0x556070, side: THREE.DoubleSide})
                            : new THREE.MeshLambertMaterial({color: colors[(bid + 2 * w) % colors.length]});
    var holder = new THREE.Group();
    parts.forEach(function (p) { holder.add(new THREE.Mesh(p, mat)); });
    holder.position.set(G.pos[3 * g], G.pos[3 * g + 1] + (bid === 0 ? spacing * w : 0), G.pos[3 * g + 2]);
    holder.quaternion.set(G.quat[4 * g + 1], G.quat[4 * g + 2], G.quat[4 * g + 3], G.quat[4 * g]);
    if (bid === 0) scene.add(holder); else bodies[w][bid].add(holder);
  }
}
if (Object.keys(skipped).length) console.info("geoms not drawn: " + JSON.stringify(skipped));
var contactGroup = new THREE.Group(); scene.add(contactGroup);
var dotGeo = new THREE.SphereGeometry(0.015, 8, 6), dotMat = new THREE.MeshBasicMaterial({color: 0xff2020});
var lineMat = new THREE.LineBasicMaterial({color: 0xffee00});
var fmax = 1e-9;
for (var i = 0; i < A.contact_force.length / 3; ++i) {
  var f = Math.hypot(A.contact_force[3 * i], A.contact_force[3 * i + 1], A.contact_force[3 * i + 2]);
  if (f > fmax) fmax = f;
}
var forceScale = 0.3 / fmax;  // the largest force of the recording is drawn 0.3 m long
function show(f) {
  for (var w = 0; w < nw; ++w) for (var b = 1; b < nbody; ++b) {
    var k = ((f * nw + w) * nbody + b);
    bodies[w][b].position.set(A.body_pos[3 * k], A.body_pos[3 * k + 1] + spacing * w, A.body_pos[3 * k + 2]);
    bodies[w][b].quaternion.set(A.body_quat[4 * k + 1], A.body_quat[4 * k + 2], A.body_quat[4 * k + 3], A.body_quat[4 * k]);
  }
  while (contactGroup.children.length) contactGroup.remove(contactGroup.children[0]);
  if (document.getElementById("contacts").checked) for (var w = 0; w < nw; ++w) {
    var c0 = A.contact_offset[f * nw + w], c1 = A.contact_offset[f * nw + w + 1];
    for (var c = c0; c < c1; ++c) {
      var p = new THREE.Vector3(A.contact_point[3 * c], A.contact_point[3 * c + 1] + spacing * w, A.contact_point[3 * c + 2]);
      var dot = new THREE.Mesh(dotGeo, dotMat); dot.position.copy(p); contactGroup.add(dot);
      var q = new THREE.Vector3(A.contact_force[3 * c], A.contact_force[3 * c + 1], A.contact_force[3 * c + 2]).multiplyScalar(forceScale).add(p);
      var lg = new THREE.Geometry(); lg.vertices.push(p, q); contactGroup.add(new THREE.Line(lg, lineMat));
    }
  }
  document.getElementById("label").textContent = "t = " + (f * H.dt).toFixed(3) + " s  (" + (f + 1) + "/" + nframe + ")";
  renderer.render(scene, camera);
}
// Camera: look at the bodies' centre in the first frame.
var box = new THREE.Box3();
for (var w = 0; w < nw; ++w) for (var b = 1; b < nbody; ++b) {
  var k = (w * nbody + b);
  if (nframe > 0) box.expandByPoint(new THREE.Vector3(A.body_pos[3 * k], A.body_pos[3 * k + 1] + spacing * w, A.body_pos[3 * k + 2]));
}
if (!box.isEmpty()) { box.getCenter(center); extent = Math.max(0.3, box.getSize(new THREE.Vector3()).length()); }
camera.position.set(center.x + 1.1 * extent, center.y - 1.1 * extent, center.z + 0.6 * extent);
camera.lookAt(center);
var slider = document.getElementById("time"), playing = true, frame = 0;
slider.max = Math.max(0, nframe - 1);
slider.addEventListener("input", function () { frame = +slider.value; show(frame); });
document.getElementById("contacts").addEventListener("change", function () { show(frame); });
document.getElementById("play").addEventListener("click", function () {
  playing = !playing; this.textContent = playing ? "pause" : "play";
});
var params = new URLSearchParams(window.location.search);
if (params.has("frame")) { frame = Math.min(+params.get("frame"), nframe - 1); playing = false; slider.value = frame; }
if (params.get("contacts") === "0") document.getElementById("contacts").checked = false;
if (nframe > 0) show(frame);
var last = 0;
function tick(ms) {
  if (playing && nframe > 1 && ms - last > 1000 * H.dt) { last = ms; frame = (frame + 1) % nframe; slider.value = frame; show(frame); }
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
if (document.body.getAttribute("data-status") === "loading") document.body.setAttribute("data-status", "ok");
})();
</script></body></html>
"""
