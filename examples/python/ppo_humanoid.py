"""PPO on sap.envs.HumanoidStand (PyTorch, CPU): a short, self-contained training loop.

    python examples/python/ppo_humanoid.py --nenv 256 --minutes 5 --out /tmp/ppo
    python examples/python/ppo_humanoid.py --scene path/to/humanoid_variant.json

Writes <out>/curve.csv (one row per iteration: env steps, seconds, mean reward per env step,
mean length and return of the episodes finished in the iteration) and, when matplotlib is
importable, <out>/curve.png. Not a test: its recorded result is in docs/python.md.
"""
import argparse
import csv
import pathlib
import time

import numpy as np
import torch
import torch.nn as nn

import sap
from sap.envs import HumanoidStand


class ActorCritic(nn.Module):
    def __init__(self, nobs, nact, hidden=128):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(nobs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                nn.Linear(hidden, nact))
        self.v = nn.Sequential(nn.Linear(nobs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                               nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.full((nact,), -0.5))
        nn.init.zeros_(self.pi[-1].weight)
        nn.init.zeros_(self.pi[-1].bias)

    def dist(self, obs):
        return torch.distributions.Normal(self.pi(obs), self.log_std.exp())


class RunningNorm:
    """Observation normaliser (running mean and variance, Welford over batches)."""

    def __init__(self, n):
        self.mean, self.var, self.count = np.zeros(n), np.ones(n), 1e-4

    def update(self, x):
        m, v, c = x.mean(0), x.var(0), x.shape[0]
        d = m - self.mean
        tot = self.count + c
        self.mean = self.mean + d * c / tot
        self.var = (self.var * self.count + v * c + d * d * self.count * c / tot) / tot
        self.count = tot

    def __call__(self, x):
        return np.clip((x - self.mean) / np.sqrt(self.var + 1e-8), -10, 10)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nenv", type=int, default=256)
    p.add_argument("--horizon", type=int, default=32)
    p.add_argument("--minutes", type=float, default=5.0)
    p.add_argument("--threads", type=int, default=0, help="simulator threads (0: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scene", default="humanoid",
                   help="a bundled scene's name (sap.scenes()) or a JSON scene path; needs a body named 'torso'")
    p.add_argument("--out", default="ppo_out")
    a = p.parse_args(argv)
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = HumanoidStand(a.nenv, sap.load_scene(a.scene), threads=a.threads, max_episode_steps=200)
    nobs, nact = env.single_observation_space.shape[0], env.single_action_space.shape[0]
    ac = ActorCritic(nobs, nact)
    opt = torch.optim.Adam(ac.parameters(), lr=3e-4)
    norm = RunningNorm(nobs)
    gamma, lam, clip, epochs, nmb = 0.99, 0.95, 0.2, 4, 4
    obs, _ = env.reset(seed=a.seed)
    ep_ret, ep_len = np.zeros(a.nenv), np.zeros(a.nenv, int)
    rows, steps, t0, it = [], 0, time.time(), 0
    sim_time = 0.0
    while time.time() - t0 < 60 * a.minutes:
        norm.update(obs)
        B = {k: [] for k in ["obs", "act", "logp", "rew", "done", "val"]}
        finished_len, finished_ret = [], []
        for _ in range(a.horizon):
            o = torch.as_tensor(norm(obs), dtype=torch.float32)
            with torch.no_grad():
                d = ac.dist(o)
                act = d.sample()
                logp = d.log_prob(act).sum(-1)
                val = ac.v(o).squeeze(-1)
            ts = time.time()
            obs, rew, term, trunc, info = env.step(act.numpy())
            sim_time += time.time() - ts
            done = term | trunc
            ep_ret += rew
            ep_len += 1
            # NEXT_STEP autoreset: the step after a done is a reset step (reward 0), not training data.
            for k, v in zip(B, [o, act, logp, rew, done, val]):
                B[k].append(torch.as_tensor(np.asarray(v)) if not torch.is_tensor(v) else v)
            if done.any():
                finished_len += list(ep_len[done])
                finished_ret += list(ep_ret[done])
                ep_ret[done] = 0
                ep_len[done] = -1  # the reset step that follows is not counted
            steps += a.nenv
        with torch.no_grad():
            last_val = ac.v(torch.as_tensor(norm(obs), dtype=torch.float32)).squeeze(-1)
        rew = torch.stack(B["rew"]).float()
        done = torch.stack(B["done"]).float()
        val = torch.stack(B["val"])
        adv = torch.zeros_like(rew)
        gae = torch.zeros(a.nenv)
        for t in reversed(range(a.horizon)):
            nxt = last_val if t == a.horizon - 1 else val[t + 1]
            delta = rew[t] + gamma * nxt * (1 - done[t]) - val[t]
            gae = delta + gamma * lam * (1 - done[t]) * gae
            adv[t] = gae
        ret = adv + val
        O = torch.stack(B["obs"]).reshape(-1, nobs)
        A = torch.stack(B["act"]).reshape(-1, nact)
        LP = torch.stack(B["logp"]).reshape(-1)
        ADV = adv.reshape(-1)
        ADV = (ADV - ADV.mean()) / (ADV.std() + 1e-8)
        RET = ret.reshape(-1)
        n = O.shape[0]
        for _ in range(epochs):
            perm = torch.randperm(n)
            for mb in perm.chunk(nmb):
                d = ac.dist(O[mb])
                ratio = (d.log_prob(A[mb]).sum(-1) - LP[mb]).exp()
                pg = -torch.min(ratio * ADV[mb], ratio.clamp(1 - clip, 1 + clip) * ADV[mb]).mean()
                vl = 0.5 * (ac.v(O[mb]).squeeze(-1) - RET[mb]).pow(2).mean()
                loss = pg + 0.5 * vl - 0.0 * d.entropy().sum(-1).mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(ac.parameters(), 1.0)
                opt.step()
        it += 1
        row = {"iteration": it, "env_steps": steps, "seconds": round(time.time() - t0, 1),
               "mean_reward": float(rew.mean()),
               "episode_length": float(np.mean(finished_len)) if finished_len else float("nan"),
               "episode_return": float(np.mean(finished_ret)) if finished_ret else float("nan"),
               "episodes": len(finished_len)}
        rows.append(row)
        if it % 10 == 1:
            print(f"it {it:4d} steps {steps:8d} t {row['seconds']:6.0f}s reward/step {row['mean_reward']:.3f} "
                  f"ep len {row['episode_length']:.1f} ep return {row['episode_return']:.1f} "
                  f"(sim {sim_time / (time.time() - t0):.0%} of the time)", flush=True)
    with open(out / "curve.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"done: {steps} env steps in {time.time() - t0:.0f} s; wrote {out / 'curve.csv'}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 2, figsize=(9, 3.2))
        x = [r["env_steps"] / 1e6 for r in rows]
        ax[0].plot(x, [r["mean_reward"] for r in rows])
        ax[0].set_xlabel("env steps (M)"); ax[0].set_ylabel("mean reward per step")
        ax[1].plot(x, [r["episode_length"] for r in rows])
        ax[1].set_xlabel("env steps (M)"); ax[1].set_ylabel("episode length (steps, max 200)")
        fig.suptitle(f"PPO on HumanoidStand, {a.nenv} worlds, CPU")
        fig.tight_layout()
        fig.savefig(out / "curve.png", dpi=100)
    except ImportError:
        pass


if __name__ == "__main__":
    main()
