"""Gymnasium vector env (sap.envs): API, the physics it steps, autoreset modes, info."""
import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.vector import AutoresetMode  # noqa: E402

import sap  # noqa: E402


def make(n=4, **kw):
    from sap.envs import HumanoidStand
    return HumanoidStand(n, threads=1, **kw)


def test_spaces_and_reset():
    env = make(4)
    assert isinstance(env, gym.vector.VectorEnv)
    obs, info = env.reset(seed=3)
    assert obs.shape == (4, env.single_observation_space.shape[0])
    assert env.observation_space.contains(obs)
    assert env.action_space.shape == (4, env.scene.nu)
    obs2, _ = env.reset(seed=3)
    assert np.array_equal(obs, obs2)  # seeded reset noise is reproducible
    assert not np.array_equal(obs[0], obs[1])  # and differs per world


def test_env_step_equals_plain_simulator_steps():
    # One env step = ctrl from the scaled action, then `decimation` physics steps: compare with a
    # plain Simulator driven by the same controls (bit-identical, same reset noise).
    env = make(3, decimation=4, reset_noise=0.0, retry_depth=0)
    env.reset(seed=0)
    sim = sap.Simulator(env.scene, nworld=3, backend="cpu", threads=1, scene_controls=False)
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (3, env.scene.nu))
    obs, rew, term, trunc, info = env.step(a)
    limited, r = env.scene.actuator_ctrlrange()
    r = np.asarray(r).reshape(-1, 2)
    sim.set_control(0.5 * (r[:, 0] + r[:, 1]) + 0.5 * (r[:, 1] - r[:, 0]) * a)
    sim.step(4)
    assert np.array_equal(np.asarray(sim.qpos), env.qpos)
    z = np.asarray(sim.body_pos)[:, env.torso, 2]
    assert np.allclose(rew, 1 + 2 * (z - 0.6) - 0.01 * (a * a).sum(1), atol=1e-5)
    assert set(info) >= {"failures", "retries", "rescued"} and info["failures"].shape == (3,)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_autoreset_after_a_fall(mode):
    # Zero torque: the humanoid collapses from the squat (torso below 0.4 m) within 2 s.
    env = make(2, autoreset_mode=mode, max_episode_steps=1000)
    obs, _ = env.reset(seed=0)
    z0 = env.body_pos[:, env.torso, 2].copy()
    zero = np.zeros((2, env.scene.nu))
    for k in range(150):
        obs, rew, term, trunc, info = env.step(zero)
        if term.any():
            break
    assert term.any(), "the unactuated humanoid should fall"
    w = int(np.flatnonzero(term)[0])
    if mode == AutoresetMode.SAME_STEP:
        assert info["_final_obs"][w] and info["final_obs"][w, -1] < 0.4
        assert obs[w, -1] == pytest.approx(z0[w], abs=0.05)  # already reset
    else:
        assert obs[w, -1] < 0.4  # terminal observation returned, reset on the next step
        obs, rew, term, trunc, info = env.step(zero)
        assert rew[w] == 0 and not term[w]
        assert obs[w, -1] == pytest.approx(z0[w], abs=0.05)


def test_truncation_at_max_episode_steps():
    env = make(2, max_episode_steps=3)
    env.reset(seed=0)
    a = np.zeros((2, env.scene.nu))
    for _ in range(2):
        _, _, _, trunc, _ = env.step(a)
        assert not trunc.any()
    _, _, _, trunc, _ = env.step(a)
    assert trunc.all()


def test_torch_arrays_give_the_same_rollout_as_numpy():
    # array="torch" computes observations, rewards and termination with torch over the same
    # zero-copy views (on the simulator's device; CPU here): identical to the numpy path.
    from conftest import torch_or_skip
    torch = torch_or_skip()
    a = make(3, max_episode_steps=40)
    b = make(3, max_episode_steps=40, array="torch")
    oa, _ = a.reset(seed=2)
    ob, _ = b.reset(seed=2)
    assert isinstance(ob, torch.Tensor) and np.array_equal(oa, ob.numpy())
    rng = np.random.default_rng(0)
    for _ in range(60):  # long enough for falls and resets
        act = rng.uniform(-1, 1, (3, a.scene.nu))
        ra = a.step(act)
        rb = b.step(torch.as_tensor(act))
        for x, y in zip(ra[:4], rb[:4]):
            assert np.array_equal(np.asarray(x), y.numpy())
