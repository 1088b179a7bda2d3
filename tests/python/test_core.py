"""The mirrored C++ API: loading, options, stepping, resets, snapshots, parameters, errors."""
import numpy as np
import pytest

import sap
from conftest import ROOT, scene_path


def make(name="pendulum.json", nworld=3, **kw):
    return sap.Simulator(sap.load_scene(scene_path(name)), nworld=nworld, backend="cpu", threads=1, **kw)


def test_pendulum_energy_is_conserved_and_period_matches_small_angle():
    # A frictionless pendulum released from rest: total energy stays put (implicit integration
    # dissipates a little: bounded to 1e-3 relative over 0.5 s) and it actually swings.
    sim = make("pendulum.json", nworld=2)
    sim.reset()
    e0 = sim.energy()
    q0 = np.asarray(sim.qpos).copy()
    sim.step(100)
    e1 = sim.energy()
    tot0 = np.add(np.add(e0["kinetic"], e0["gravity"]), e0["spring"])
    tot1 = np.add(np.add(e1["kinetic"], e1["gravity"]), e1["spring"])
    assert np.all(np.abs(tot1 - tot0) <= 1e-2 * np.maximum(1.0, np.abs(tot0)))
    assert not np.allclose(np.asarray(sim.qpos), q0)
    assert sim.time == pytest.approx(100 * sim.dt)


@pytest.mark.parametrize("scene", ["humanoid.json", "box_stack_5.json"])  # box_stack_5: nu = 0
def test_views_are_zero_copy_and_track_the_state(scene):
    sim = make(scene, nworld=4)
    for name in ["qpos", "qvel", "body_pos", "body_quat", "contact_force", "contact_flag", "ctrl"]:
        v = getattr(sim, name)
        a = np.asarray(v)
        b = np.from_dlpack(v)
        assert tuple(a.shape) == tuple(v.shape) == tuple(b.shape), name
        if a.size == 0:  # an empty array owns no memory: numpy 2 may give it any pointer (0)
            continue
        assert a.ctypes.data == v.data_ptr, name  # no copy
        assert b.ctypes.data == v.data_ptr, name
    q = np.asarray(sim.qpos)
    before = q.copy()
    sim.step(5)
    assert not np.array_equal(q, before)  # the same array now shows the new state
    assert np.asarray(sim.qpos).ctypes.data == q.ctypes.data  # pointers fixed for the lifetime


def test_control_writes_reach_the_simulator():
    # Writing the ctrl view (numpy, DLPack) equals set_control with the same values, bit for bit.
    scene = sap.load_scene(scene_path("pd_arm.json"))
    a = sap.Simulator(scene, nworld=3, backend="cpu", threads=1)
    b = sap.Simulator(scene, nworld=3, backend="cpu", threads=1)
    u = np.linspace(-0.5, 0.5, 3 * scene.nu).reshape(3, scene.nu)
    np.from_dlpack(a.ctrl)[:] = u  # through DLPack (writable versioned tensor)
    assert np.array_equal(np.asarray(a.ctrl), u)
    b.set_control(u)
    a.step(10)
    b.step(10)
    assert np.array_equal(np.asarray(a.qpos), np.asarray(b.qpos))
    c = sap.Simulator(scene, nworld=3, backend="cpu", threads=1)
    c.set_control(np.zeros_like(u))
    c.step(10)
    assert not np.array_equal(np.asarray(c.qpos), np.asarray(a.qpos))  # controls did something


def test_views_keep_the_simulator_alive():
    sim = make("free_cube.json", nworld=2)
    q = np.asarray(sim.qpos)
    d = np.from_dlpack(sim.qvel)
    expected = q.copy()
    del sim
    import gc
    gc.collect()
    assert np.array_equal(q, expected)
    assert d.shape[0] == 2


def test_observation_views_are_read_only_through_numpy():
    sim = make("free_cube.json")
    with pytest.raises(ValueError):
        np.asarray(sim.qpos)[0, 0] = 1.0
    np.asarray(sim.ctrl)  # ctrl is writable (no exception on creation)


def test_subset_reset_and_snapshot_round_trip():
    sim = make("box_stack_5.json", nworld=4)
    fresh = make("box_stack_5.json", nworld=4)
    bp = np.asarray(sim.body_pos)  # pose tracking on: poses follow steps and resets
    sim.step(20)
    stepped = np.asarray(sim.qpos).copy()
    sim.reset(worlds=[1, 3])
    q = np.asarray(sim.qpos)
    assert np.array_equal(q[[1, 3]], np.asarray(fresh.qpos)[[1, 3]])  # bit-identical to fresh worlds
    assert np.array_equal(q[[0, 2]], stepped[[0, 2]])  # others untouched
    assert np.array_equal(bp[[1, 3]], np.asarray(fresh.body_pos)[[1, 3]])  # poses of the reset state
    mask = np.array([True, False, False, False])
    sim.reset(worlds=mask)
    assert np.array_equal(q[0], np.asarray(fresh.qpos)[0])
    snap = sim.save()
    sim.step(7)
    after7 = q.copy()
    sim.restore(snap)
    sim.step(7)
    assert np.array_equal(q, after7)  # a restored run continues bit-identically
    with pytest.raises(IndexError):
        sim.reset(worlds=[9])


def test_reset_from_states_keyframe_and_noise():
    sim = make("free_cube.json", nworld=3)
    nq, nv = sim.nq, sim.nv
    qs = np.tile(np.asarray(sim.qpos)[0], (3, 1))
    qs[:, 2] += np.array([0.1, 0.2, 0.3])
    sim.reset(worlds=[0, 2], source="states", qpos=qs, qvel=np.zeros((3, nv)))
    q = np.asarray(sim.qpos)
    assert q[0, 2] == qs[0, 2] and q[2, 2] == qs[2, 2] and q[1, 2] != qs[1, 2]
    k = sim.add_keyframe(qs[1])
    sim.reset(worlds=[1], source="keyframe", keyframe=k)
    assert np.array_equal(q[1], qs[1])
    sim.reset(source="initial", qpos_noise=0.01, seed=7)
    n1 = q.copy()
    sim.reset(source="initial", qpos_noise=0.01, seed=7)
    assert np.array_equal(q, n1)  # same seed, same states
    assert not np.array_equal(n1[0], n1[1])  # noise differs per world
    with pytest.raises(ValueError, match="expected 21 values|expected"):
        sim.reset(source="states", qpos=np.zeros(2))
    assert nq == 7


def test_world_params_gravity_scales_free_fall():
    # Two cubes released at rest in free fall (no contact within 0.1 s) under gravity 9.81 and
    # 1.0: the drops are 1/2 g t^2 (to the integrator's O(dt) error) and their ratio is 9.81.
    sim = make("free_cube.json", nworld=2)
    q0 = np.asarray(sim.qpos).copy()
    sim.reset(source="states", qpos=q0, qvel=np.zeros((2, sim.nv)))
    sim.set_world_params("gravity", np.array([[0, 0, -9.81], [0, 0, -1.0]]))
    n = 20
    sim.step(n)
    t = n * sim.dt
    dz = q0[:, 2] - np.asarray(sim.qpos)[:, 2]
    assert dz[0] == pytest.approx(0.5 * 9.81 * t * t, rel=0.1)
    assert dz[1] == pytest.approx(0.5 * 1.0 * t * t, rel=0.1)
    assert dz[0] / dz[1] == pytest.approx(9.81, rel=1e-6)
    with pytest.raises(ValueError, match="kind 'bogus'"):
        sim.set_world_params("bogus", np.zeros((2, 3)))


def test_solver_options_as_keywords_and_errors_carry_the_cpp_message(tmp_path):
    s = sap.load_scene(scene_path("free_cube.json"))
    sap.Simulator(s, nworld=1, backend="cpu", preset="approx64", max_iterations=50)
    with pytest.raises(ValueError, match="rho"):
        sap.Simulator(s, nworld=1, backend="cpu", rho=3)
    # An unknown keyword is a mistake in the call (TypeError), naming the valid keywords.
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus_option'") as e:
        sap.Simulator(s, nworld=1, backend="cpu", bogus_option=1)
    assert "nworld" in str(e.value) and "max_iterations" in str(e.value)
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "name": "x", "simulation": {"dt": "fast"}}')
    with pytest.raises(Exception, match=r"bad\.json: /simulation/dt"):
        sap.load_scene(str(bad))
    with pytest.raises(FileNotFoundError, match="nope.json") as e:
        sap.load_scene("nope.json")
    assert e.value.filename == "nope.json"
    badxml = tmp_path / "bad.xml"
    badxml.write_text("<mujoco><worldbody><body><geom type='sphere'/></body>\n</worldbod></mujoco>")
    with pytest.raises(Exception, match="bad.xml"):
        sap.load_mjcf(str(badxml))


def test_load_mjcf_matches_scene_model():
    s = sap.load_mjcf(sap.data_dir() / "models/mujoco_humanoid/humanoid.xml")
    assert (s.nq, s.nv, s.nu, s.nbody) == (28, 27, 21, 17)
    sim = sap.Simulator(s, nworld=2, backend="cpu", threads=1)
    sim.step(2)
    assert np.all(np.isfinite(np.asarray(sim.qpos)))


def test_counters_and_diagnostics():
    sim = make("box_stack_5.json", nworld=2, retry_depth=1)
    sim.step(3)
    c = sim.counters()
    assert len(c["failures"]) == 2 and sum(c["failures"]) == 0
    t = sim.last_step_times()
    assert t["total"] >= 0
    assert sim.failed_worlds() == []
    d = sim.diagnostics()
    assert len(d["status"]) == 2 and all(st & 1 for st in d["status"])  # converged
    assert all(n > 0 for n in d["contacts"])  # the stack rests on the ground
    assert all(t == 0 for t in d["truncated_contacts"])


def test_fp64_retry_counters(root):
    # The UR5 with its end-effector box on the floor in rigid contact: approx32's fp32 step fails
    # and is repeated in fp64 (tests/test_fp64_retry.cpp); with capacity 1 the two failed worlds
    # take two rounds (plain launches), so none overflows and none stays failed.
    s = sap.load_scene(str(root / "tests/data/ur5_box_floor_rigid.json"))
    sim = sap.Simulator(s, nworld=2, backend="cpu", threads=1, preset="approx32", near_rigid_threshold=0,
                        fp64_retry_capacity=1)
    sim.step(5)
    c = sim.fp64_retry_counters()
    assert c["capacity"] == 1
    assert all(n > 0 for n in c["steps"]) and c["rescued"] == c["steps"]
    assert c["overflow"] == [0, 0]
    assert sim.failed_worlds() == []
    off = sap.Simulator(s, nworld=2, backend="cpu", threads=1, preset="approx32", near_rigid_threshold=0,
                        fp64_retry=False)
    off.step(5)
    assert off.fp64_retry_counters()["steps"] == [0, 0]
    assert off.failed_worlds() == [0, 1]


def test_cuda_views_when_a_device_exists():
    if not sap.cuda_compiled() or sap.cuda_device_count() == 0:
        pytest.skip("no CUDA device (or a CPU-only build): CUDA zero-copy test skipped")
    sim = sap.Simulator(sap.load_scene(scene_path("free_cube.json")), nworld=2, backend="cuda")
    v = sim.qpos
    assert v.device == "cuda"
    assert v.__dlpack_device__()[0] == 2  # kDLCUDA
    assert v.__cuda_array_interface__["data"][0] == v.data_ptr


def test_torch_from_dlpack_aliases_the_simulator():
    from conftest import torch_or_skip
    torch = torch_or_skip()
    sim = make("pd_arm.json", nworld=2)
    q = torch.from_dlpack(sim.qpos)
    assert q.data_ptr() == sim.qpos.data_ptr and q.dtype == torch.float64
    c = torch.from_dlpack(sim.ctrl)
    c.fill_(0.25)  # a write through torch reaches the simulator
    assert np.all(np.asarray(sim.ctrl) == 0.25)
    before = q.clone()
    sim.step(5)
    assert not torch.equal(q, before)  # the tensor shows the new state
    f = torch.from_dlpack(sim.contact_flag)
    assert f.dtype == torch.int32 and f.data_ptr() == sim.contact_flag.data_ptr


def test_jax_from_dlpack_aliases_the_simulator():
    jax = pytest.importorskip("jax", reason="jax not installed (its CPU wheel is ~350 MB: not in the default set-up)")
    jax.config.update("jax_enable_x64", True)
    import jax.dlpack
    sim = make("pd_arm.json", nworld=2)
    q = jax.dlpack.from_dlpack(sim.qpos)
    ptr = q.unsafe_buffer_pointer()
    assert ptr == sim.qpos.data_ptr  # JAX wrapped the simulator's memory (no copy)
    assert np.array_equal(np.asarray(q), np.asarray(sim.qpos))


def test_device_index_is_validated():
    # One Simulator per CUDA device (device=k); the CPU backend has only device 0.
    with pytest.raises(ValueError, match="CPU backend"):
        make("box_stack_5.json", nworld=2, device=1)
    if sap.cuda_compiled() and sap.cuda_device_count() > 0:
        with pytest.raises(ValueError, match="does not exist"):
            sap.Simulator(sap.load_scene(scene_path("box_stack_5.json")), nworld=2, backend="cuda",
                          device=sap.cuda_device_count())
