"""Sharding worlds over processes with torch.distributed (docs/python.md#distributed).

Each process (rank) owns a contiguous block of the global worlds and its own Simulator (one per
GPU with the NCCL backend, or CPU processes with gloo). Observations are gathered with
``torch.distributed.all_gather_into_tensor`` / ``all_gather`` over zero-copy tensors of the
simulator's views; no transport of our own.

Worlds of a scene with a per-world perturbation take their noise from their local index, so a
sharded run reproduces a single-process run world by world when the initial states are given
explicitly (``reset(source="states")`` with each rank's slice of the global states), as
:func:`initial_states` and examples/python/distributed_rollout.py do.
"""
from __future__ import annotations

import numpy as np


def shard(nworld, rank, world_size):
    """(first, count) of the global worlds owned by `rank`: blocks as equal as possible."""
    if not 0 <= rank < world_size:
        raise ValueError(f"shard: rank {rank} outside [0, {world_size})")
    base, extra = divmod(int(nworld), int(world_size))
    first = rank * base + min(rank, extra)
    return first, base + (1 if rank < extra else 0)


def initial_states(scene, nworld, seed, qvel_noise=0.1):
    """Global initial states: qpos (nworld, nq) = the scene's qpos0 in every world and qvel
    (nworld, nv) with seeded Gaussian noise, world w's row a pure function of (seed, w) (so any
    shard computes its rows without the others; velocities need no quaternion renormalisation)."""
    q0 = np.asarray(scene.qpos0, dtype=np.float64)
    qpos = np.tile(q0, (nworld, 1))
    qvel = np.stack([np.random.default_rng([int(seed), w]).normal(0.0, qvel_noise, scene.nv)
                     for w in range(nworld)]) if nworld else np.zeros((0, scene.nv))
    return qpos, qvel


def gather(view, group=None):
    """All-gathers a simulator view (first axis: local worlds) into a (global worlds, ...) torch
    tensor on every rank. Ranks may own different numbers of worlds."""
    import torch
    import torch.distributed as dist

    local = torch.from_dlpack(view)  # zero copy
    size = dist.get_world_size(group)
    counts = [torch.zeros(1, dtype=torch.int64) for _ in range(size)]
    dist.all_gather(counts, torch.tensor([local.shape[0]], dtype=torch.int64), group=group)
    counts = [int(c) for c in counts]
    # gloo gathers equal shapes only: pad every block to the largest, then trim.
    most = max(counts)
    if local.shape[0] == most:
        send = local.contiguous()
    else:
        send = torch.zeros((most, *local.shape[1:]), dtype=local.dtype, device=local.device)
        send[: local.shape[0]] = local
    parts = [torch.empty_like(send) for _ in range(size)]
    dist.all_gather(parts, send, group=group)
    return torch.cat([p[:c] for p, c in zip(parts, counts)], 0)
