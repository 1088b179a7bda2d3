"""Viewer: trajectory file round trip, contact data, and the HTML page in headless Chromium."""
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import sap
from sap import viewer
from conftest import scene_path


def record(nframe=30, worlds=(0, 1)):
    sim = sap.Simulator(sap.load_scene(scene_path("box_stack_5.json")), nworld=2, backend="cpu", threads=1)
    rec = viewer.Recorder(sim, worlds=worlds)
    for _ in range(nframe):
        sim.step(2)
        rec.record()
    return sim, rec.trajectory()


def test_contacts_sum_to_the_body_contact_forces_and_carry_the_weight():
    # Per-contact forces (sim.contacts) summed per body equal the contact_force view, and at
    # rest the ground carries the stack's weight: sum of normal forces = m g.
    sim = sap.Simulator(sap.load_scene(scene_path("box_stack_5.json")), nworld=1, backend="cpu", threads=1)
    cf = np.asarray(sim.contact_force)
    sim.step(200)
    c = sim.contacts(0)
    f = np.asarray(c["force"]).reshape(-1, 3)
    b = np.asarray(c["body"]).reshape(-1, 2)
    per_body = np.zeros_like(cf[0])
    np.add.at(per_body, b[:, 1], f)
    np.add.at(per_body, b[:, 0], -f)
    assert np.allclose(per_body[1:], cf[0, 1:], atol=1e-9 * max(1.0, np.abs(cf).max()))
    weight = -cf[0, 0, 2]  # the ground's push on the stack, seen as the force on the world body
    assert abs(np.asarray(sim.qvel)).max() < 1e-2  # at rest
    g = -sim.scene.gravity[2]
    assert weight == pytest.approx(sum(sim.scene.body_mass) * g, rel=1e-3)


def test_trajectory_file_round_trip(tmp_path):
    sim, traj = record()
    p = tmp_path / "t.saptraj"
    viewer.save(traj, p)
    back = viewer.load(p)
    for k in ["body_pos", "body_quat", "contact_offset", "contact_point", "contact_force"]:
        assert np.array_equal(back[k], traj[k]), k
    assert back["header"]["nframe"] == 30 and back["body_pos"].shape == (30, 2, sim.nbody, 3)
    assert np.allclose(back["body_pos"][-1], np.asarray(sim.body_pos), atol=1e-6)  # last frame = state
    assert back["contact_offset"][-1] == len(back["contact_point"]) > 0
    bad = tmp_path / "bad.saptraj"
    bad.write_bytes(b"NOTATRAJ....")
    with pytest.raises(ValueError, match="bad.saptraj: not a sap trajectory"):
        viewer.load(bad)
    head_len = int.from_bytes(p.read_bytes()[8:12], "little")
    bad.write_bytes(p.read_bytes()[:12 + head_len + 100])
    with pytest.raises(ValueError, match="truncated"):
        viewer.load(bad)


def chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium not installed (Debian package chromium; tools/setup_python.sh)")
    if not viewer.THREE_JS.exists():
        pytest.skip("three.js not installed (Debian package libjs-three)")
    return exe


def run_chromium(exe, url, *extra):
    cmd = [exe, "--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
           "--window-size=640,480", "--virtual-time-budget=3000", "--enable-logging=stderr", "--v=0", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, HOME=os.environ.get("TMPDIR", "/tmp")))


def test_html_page_loads_without_errors_and_shows_the_scene(tmp_path):
    exe = chromium()
    pytest.importorskip("PIL")
    from PIL import Image
    _, traj = record(nframe=40)
    html = tmp_path / "stack.html"
    viewer.to_html(traj, html)
    text = html.read_text()
    assert "<script src" not in text  # self-contained: three.js inlined
    url = html.as_uri()
    dom = run_chromium(exe, url + "?frame=39", "--dump-dom")
    assert 'data-status="ok"' in dom.stdout, dom.stdout[-2000:] + dom.stderr[-2000:]
    assert '<div id="errors" style="display:none"></div>' in dom.stdout  # no error, no console.error
    assert "Uncaught" not in dom.stderr
    shots = {}
    for contacts in ("1", "0"):
        png = tmp_path / f"shot{contacts}.png"
        r = run_chromium(exe, f"{url}?frame=39&contacts={contacts}", f"--screenshot={png}")
        assert png.exists(), r.stderr[-2000:]
        shots[contacts] = np.asarray(Image.open(png).convert("RGB")).astype(int)
    img = shots["1"][:-40]  # above the control bar
    bg = np.array([0x20, 0x24, 0x2c])
    not_bg = np.abs(img - bg).sum(-1) > 30
    assert not_bg.mean() > 0.2, "the canvas is (nearly) blank"
    # Bodies are drawn in saturated colours (orange, blue, green, ...), unlike floor and background.
    sat = img.max(-1) - img.min(-1)
    assert (sat > 80).sum() > 500, "no body pixels"
    # Contacts toggle: yellow force lines and red points only with contacts on.
    def contact_pixels(a):
        r, g, b = a[..., 0], a[..., 1], a[..., 2]
        return int((((r > 200) & (g > 200) & (b < 80)) | ((r > 200) & (g < 60) & (b < 60))).sum())
    assert contact_pixels(shots["1"][:-40]) > contact_pixels(shots["0"][:-40]) + 20
