"""Worlds sharded over processes with torch.distributed (docs/python.md#distributed).

    python examples/python/distributed_rollout.py --nproc 2 --nworld 64 --steps 50   # gloo, CPU
    torchrun --nproc-per-node 2 examples/python/distributed_rollout.py --nworld 64  # same via torchrun

Every rank owns a block of worlds (sap.distributed.shard) and its own Simulator, drives them with
controls that depend only on the global world index and the step, and all-gathers qpos. Rank 0
prints a checksum of the gathered state; with --check it also runs all worlds in one simulator
and reports the largest difference world by world (0 expected: worlds are independent).
"""
import argparse
import os
import sys

import numpy as np


def controls(nu, first, count, step):
    w = np.arange(first, first + count)[:, None]
    j = np.arange(nu)[None, :]
    return 0.4 * np.sin(0.3 * step + 0.7 * w + 1.3 * j)


def run(sap, scene, first, count, nworld_total, steps, seed, decimation=2):
    from sap.distributed import initial_states
    sim = sap.Simulator(scene, nworld=count, backend="cpu", threads=1, scene_controls=False)
    qpos, qvel = initial_states(scene, nworld_total, seed)
    if count:
        sim.reset(worlds=np.arange(count), source="states",
                  qpos=qpos[first:first + count], qvel=qvel[first:first + count])
    for k in range(steps):
        sim.set_control(controls(scene.nu, first, count, k))
        sim.step(decimation)
    return sim


def worker(rank, world_size, args, init):
    import torch
    import torch.distributed as dist
    import sap
    from sap.distributed import gather, shard

    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world_size)
    scene = sap.load_scene(args.scene)
    first, count = shard(args.nworld, rank, world_size)
    sim = run(sap, scene, first, count, args.nworld, args.steps, args.seed)
    full = gather(sim.qpos)  # (nworld, nq) on every rank
    if rank == 0:
        q = full.numpy()
        print(f"rank 0: gathered qpos {tuple(q.shape)} from {world_size} ranks, checksum {q.sum():.12e}")
        if args.check:
            ref = run(sap, scene, 0, args.nworld, args.nworld, args.steps, args.seed)
            diff = np.abs(np.asarray(ref.qpos) - q).max(axis=1)
            print(f"single-process run: max |difference| over worlds {diff.max():.3e}")
        if args.out:
            np.save(args.out, q)
    dist.barrier()
    dist.destroy_process_group()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scene", default="box_stack_5", help="a bundled scene's name (sap.scenes()) or a JSON scene path")
    p.add_argument("--nworld", type=int, default=16)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--nproc", type=int, default=2, help="processes to spawn (ignored under torchrun)")
    p.add_argument("--check", action="store_true", help="compare with a single-process run")
    p.add_argument("--out", default="", help="rank 0 saves the gathered qpos (.npy)")
    args = p.parse_args(argv)
    if "RANK" in os.environ:  # torchrun
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args, "env://")
        return
    import tempfile
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(worker, args=(args.nproc, args, f"file://{d}/rendezvous"), nprocs=args.nproc, join=True)


if __name__ == "__main__":
    sys.exit(main())
