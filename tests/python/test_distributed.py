"""torch.distributed sharding (gloo, 2 CPU processes): sharded == single process, world by world."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import sap
from conftest import ROOT, scene_path, torch_or_skip
from sap.distributed import initial_states, shard


def test_shard_blocks_cover_all_worlds():
    for n in [0, 1, 7, 16, 1025]:
        for size in [1, 2, 3, 8]:
            blocks = [shard(n, r, size) for r in range(size)]
            assert sum(c for _, c in blocks) == n
            assert all(blocks[i][0] + blocks[i][1] == blocks[i + 1][0] for i in range(size - 1))
            assert max(c for _, c in blocks) - min(c for _, c in blocks) <= 1
    with pytest.raises(ValueError):
        shard(4, 2, 2)


def test_initial_states_of_a_shard_are_its_rows_of_the_global_states():
    scene = sap.load_scene(scene_path("box_stack_5.json"))
    q, v = initial_states(scene, 10, seed=3)
    q2, v2 = initial_states(scene, 4, seed=3)
    assert np.array_equal(v[:4], v2) and np.array_equal(q[:4], q2)
    assert not np.array_equal(v[0], v[1])


def test_two_gloo_processes_equal_a_single_process_run(tmp_path):
    torch_or_skip()
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    import distributed_rollout as ex

    out = tmp_path / "gathered.npy"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([p for p in sys.path if p]))
    r = subprocess.run([sys.executable, str(ROOT / "examples/python/distributed_rollout.py"), "--nproc", "2",
                        "--nworld", "9", "--steps", "15", "--scene", scene_path("box_stack_5.json"),
                        "--out", str(out)], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    sharded = np.load(out)
    scene = sap.load_scene(scene_path("box_stack_5.json"))
    single = ex.run(sap, scene, 0, 9, 9, 15, 1)
    ref = np.asarray(single.qpos)
    assert sharded.shape == ref.shape
    for w in range(9):  # world by world, bit for bit
        assert np.array_equal(sharded[w], ref[w]), f"world {w}"
    fresh = np.tile(np.asarray(scene.qpos0), (9, 1))
    assert not np.allclose(ref, fresh)  # the run moved the worlds
