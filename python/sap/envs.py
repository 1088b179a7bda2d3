"""Gymnasium 1.x vector environments over a :class:`sap.Simulator` (docs/python.md).

:class:`SimVectorEnv` is the generic part: one simulator world per sub-environment, actions in
[-1, 1] scaled to the actuators' control ranges and written into the simulator's own control
buffer (zero copy), ``decimation`` physics steps per env step (``Simulator.step(n)``), per-world
episode termination and truncation, subset resets with seeded noise, both Gymnasium autoreset
modes (next step, same step), and ``info`` with per-world solver failures and retries.
A task subclasses it with ``_observe``, ``_reward`` and ``_terminated``.

:class:`HumanoidStand` is the task: MuJoCo's humanoid released from its squat keyframe must keep
its torso up (reward as in the MuJoCo/Brax humanoid tasks: an alive bonus, here plus torso
height, minus a control cost; the episode ends when the torso falls below 0.4 m).

Array work runs over the simulator's zero-copy views: numpy (``array="numpy"``, CPU backend) or
torch tensors on the simulator's device (``array="torch"``: observations, rewards and termination
computed on the device; only the reset mask goes to the host).
"""
from __future__ import annotations

import pathlib

import numpy as np

try:
    import gymnasium as gym
    from gymnasium.vector import AutoresetMode, VectorEnv
except ImportError as e:  # pragma: no cover
    raise ImportError("sap.envs needs gymnasium >= 1.0 (pip install gymnasium)") from e

from . import _sap, load_scene


class SimVectorEnv(VectorEnv):
    """A Gymnasium VectorEnv whose sub-environments are the worlds of one Simulator."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, scene, num_envs, *, decimation=4, max_episode_steps=1000, backend="cpu",
                 threads=0, autoreset_mode=AutoresetMode.NEXT_STEP, action_scale=1.0,
                 reset_noise=0.01, retry_depth=2, array="numpy", **simulator_kwargs):
        if isinstance(scene, (str, pathlib.Path)):
            scene = load_scene(scene)  # a path or a bundled scene's name
        self.scene = scene
        self.num_envs = int(num_envs)
        self.decimation = int(decimation)
        self.max_episode_steps = int(max_episode_steps)
        self.reset_noise = float(reset_noise)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = dict(self.metadata, autoreset_mode=self.autoreset_mode)
        self.sim = _sap.Simulator(scene, nworld=self.num_envs, backend=backend, threads=threads,
                                  scene_controls=False, retry_depth=retry_depth, **simulator_kwargs)
        # Zero-copy views (fixed pointers for the simulator's lifetime): numpy arrays (CPU), or
        # torch tensors on the simulator's device (array="torch": termination, rewards and
        # observations are computed where the simulator's memory is, CUDA included).
        if array not in ("numpy", "torch"):
            raise ValueError(f"array: '{array}': expected 'numpy' or 'torch'")
        self.array = array
        if array == "torch":
            import torch
            self._t = torch
            wrap = torch.from_dlpack
        else:
            self._t = None
            wrap = np.asarray
        self.qpos = wrap(self.sim.qpos)
        self.qvel = wrap(self.sim.qvel)
        self.body_pos = wrap(self.sim.body_pos)
        self.ctrl = wrap(self.sim.ctrl)
        limited, rng = scene.actuator_ctrlrange()
        rng = np.asarray(rng, dtype=np.float64).reshape(-1, 2)
        lo = np.where(np.asarray(limited, bool), rng[:, 0], -1.0)
        hi = np.where(np.asarray(limited, bool), rng[:, 1], 1.0)
        self._ctrl_mid = self._arr(0.5 * (lo + hi))
        self._ctrl_half = self._arr(0.5 * (hi - lo) * float(action_scale))
        nu = scene.nu
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (nu,), np.float32)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        nobs = self._observe().shape[1]
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (nobs,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self._elapsed = self._arr(np.zeros(self.num_envs, np.int64))
        self._pending = self._arr(np.zeros(self.num_envs, bool))  # NEXT_STEP: worlds to reset at the next step
        self._seed = 0
        self._episode = 0

    # ---- array helpers (numpy or torch on the simulator's device)
    def _arr(self, a, dtype=None):
        if self._t is None:
            return np.asarray(a, dtype=dtype)
        t = self._t.as_tensor(a, device=self.ctrl.device)
        return t.to(dtype) if dtype is not None else t

    def _cat(self, parts):
        return np.concatenate(parts, axis=1) if self._t is None else self._t.cat(parts, 1)

    def _isfinite(self, a):
        return np.isfinite(a) if self._t is None else self._t.isfinite(a)

    def _f32(self, a):
        return a.astype(np.float32) if self._t is None else a.float()

    def _copy(self, a):
        return a.copy() if self._t is None else a.clone()

    def _host_mask(self, m):
        # Subset resets take a host mask (one device-to-host copy of nworld bools on CUDA).
        return m if self._t is None else m.cpu().numpy()

    # ---- task interface
    def _observe(self) -> np.ndarray:
        raise NotImplementedError

    def _reward(self, actions: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _terminated(self) -> np.ndarray:
        raise NotImplementedError

    # ---- Gymnasium API
    def _reset_worlds(self, mask):
        self._episode += 1
        self.sim.reset(worlds=self._host_mask(mask), source="initial", qpos_noise=self.reset_noise,
                       qvel_noise=self.reset_noise, seed=self._seed * 1000003 + self._episode)
        self._elapsed[mask] = 0

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._seed = int(seed)
            self._episode = 0
        mask = np.ones(self.num_envs, bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], bool)
        mask = self._arr(mask)
        self._reset_worlds(mask)
        self._pending[mask] = False
        return self._f32(self._observe()), {}

    def _info(self):
        c = self.sim.counters()
        return {"failures": np.asarray(c["failures"]), "retries": np.asarray(c["retries"]),
                "rescued": np.asarray(c["rescued"])}

    def step(self, actions):
        if self._t is None:
            actions = np.clip(np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1), -1.0, 1.0)
            np.multiply(actions, self._ctrl_half, out=self.ctrl)  # straight into the simulator
        else:
            actions = self._arr(actions, self._t.float64).reshape(self.num_envs, -1).clamp(-1.0, 1.0)
            self.ctrl.copy_(actions * self._ctrl_half)
        self.ctrl += self._ctrl_mid
        reset_now = self._copy(self._pending) if self.autoreset_mode == AutoresetMode.NEXT_STEP else None
        if reset_now is not None and reset_now.any():
            self.ctrl[reset_now] = self._ctrl_mid
        self.sim.step(self.decimation)
        self._elapsed += 1
        reward = self._reward(actions)
        terminated = self._terminated()
        truncated = self._elapsed >= self.max_episode_steps
        info = self._info()
        if reset_now is not None:
            if reset_now.any():  # these worlds ended last step: this step only resets them
                self._reset_worlds(reset_now)
                reward[reset_now] = 0.0
                terminated[reset_now] = False
                truncated[reset_now] = False
            done = terminated | truncated
            self._pending = done
            obs = self._f32(self._observe())
        else:  # SAME_STEP: final observation in info, reset observation returned
            done = terminated | truncated
            obs = self._f32(self._observe())
            if done.any():
                info["final_obs"] = self._copy(obs)
                info["_final_obs"] = self._copy(done)
                self._reset_worlds(done)
                obs = self._f32(self._observe())
        return obs, self._f32(reward), terminated, truncated, info

    def close_extras(self, **kwargs):
        self.sim = None


class HumanoidStand(SimVectorEnv):
    """MuJoCo's humanoid: keep the torso up from the squat keyframe.

    Observation (float32): qpos without the root's x, y (nq - 2), qvel * 0.1 (nv), torso height.
    Reward per env step: 1 (alive) + 2 (z_torso - 0.6) - 0.01 |a|^2 (the alive bonus and the control
    cost of MuJoCo's Humanoid-v4, a height term in place of forward velocity).
    Terminated: z_torso < 0.4 m or any non-finite state (a failed world). Truncated: max_episode_steps.
    """

    def __init__(self, num_envs, scene="humanoid", *, fall_height=0.4, max_episode_steps=200, **kw):
        if isinstance(scene, (str, pathlib.Path)):
            scene = load_scene(scene)  # default: the bundled humanoid scene (sap.scenes())
        self.torso = scene.body_id("torso")
        if self.torso < 0:
            raise ValueError("HumanoidStand: the scene has no body named 'torso'")
        self.fall_height = float(fall_height)
        super().__init__(scene, num_envs, max_episode_steps=max_episode_steps, **kw)

    def _observe(self):
        z = self.body_pos[:, self.torso, 2:3]
        return self._cat([self.qpos[:, 2:], 0.1 * self.qvel, z])

    def _reward(self, actions):
        z = self.body_pos[:, self.torso, 2]
        return 1.0 + 2.0 * (z - 0.6) - 0.01 * (actions * actions).sum(1)

    def _terminated(self):
        z = self.body_pos[:, self.torso, 2]
        finite = self._isfinite(self.qpos).all(1)
        return (z < self.fall_height) | ~finite
