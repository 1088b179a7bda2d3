"""viser live viewer: frames follow the simulator's body poses; a trajectory replays."""
import socket

import numpy as np
import pytest

import sap
from conftest import scene_path

viser = pytest.importorskip("viser", reason="viser not installed (tools/setup_python.sh --viser)")
from sap import viewer, viewer_live  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_live_viewer_tracks_body_poses_and_replays():
    sim = sap.Simulator(sap.load_scene(scene_path("box_stack_5.json")), nworld=2, backend="cpu", threads=1)
    server = viser.ViserServer(host="127.0.0.1", port=free_port(), verbose=False)
    try:
        v = viewer_live.LiveViewer(sim, worlds=[0, 1], server=server)
        rec = viewer.Recorder(sim, worlds=[0, 1])
        for _ in range(5):
            sim.step(2)
            v.update()
            rec.record()
        bp, bq = np.asarray(sim.body_pos), np.asarray(sim.body_quat)
        for w in range(2):
            for b in range(1, sim.nbody):
                assert np.allclose(v.scene.handles[w][b].position, bp[w, b])
                assert np.allclose(v.scene.handles[w][b].wxyz, bq[w, b])
        _, show = viewer_live.replay(rec.trajectory(), server=server)
        show(0)
    finally:
        server.stop()
