"""Python loop overhead against sap_bench on the same scene (CPU backend; docs/python.md).

    python examples/python/bench_overhead.py --sap-bench build-cpu/sap_bench \
        --scene humanoid --worlds 1024 --steps 100 --threads 2 --repeats 3

Runs, alternately (so both see the same machine load), `sap_bench SCENE --worlds N --steps S`
(C++: world-steps/s of its timed pass) and the same stepping from Python: a gym-style loop that
per step writes the controls through the zero-copy ctrl view, calls sim.step() and reads an
observation (torso height) through the zero-copy body_pos view. Reports the medians and the
overhead = 1 - python / C++ throughput.
"""
import argparse
import json
import statistics
import subprocess
import tempfile
import time

import numpy as np

import sap


def python_loop(scene, worlds, steps, warmup, threads):
    sim = sap.Simulator(scene, nworld=worlds, backend="cpu", threads=threads)
    ctrl = np.asarray(sim.ctrl)  # zero copy (disables scene schedules: constant controls)
    body_pos = np.asarray(sim.body_pos)
    action = np.zeros_like(ctrl)
    for _ in range(warmup):
        sim.step()
    t = time.perf_counter()
    acc = 0.0
    for _ in range(steps):
        ctrl[:] = action
        sim.step()
        acc += float(body_pos[:, 1, 2].mean())
    wall = time.perf_counter() - t
    return worlds * steps / wall


def cpp_bench(exe, scene_path, worlds, steps, warmup, threads):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([exe, scene_path, "--worlds", str(worlds), "--steps", str(steps), "--warmup", str(warmup),
                        "--backend", "cpu", "--threads", str(threads), "--stats-every", "0", "--quiet",
                        "--json", f.name], check=True)
        j = json.load(open(f.name))
    rec = j[0] if isinstance(j, list) else j
    for key in ("world_steps_per_s",):
        if key in rec:
            return rec[key]
    return rec["results"][0]["world_steps_per_s"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sap-bench", required=True)
    p.add_argument("--scene", default="humanoid", help="a bundled scene's name (sap.scenes()) or a JSON scene path")
    p.add_argument("--worlds", type=int, default=1024)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    scene = sap.load_scene(a.scene)
    cpp, py = [], []
    for r in range(a.repeats):
        cpp.append(cpp_bench(a.sap_bench, scene.source, a.worlds, a.steps, a.warmup, a.threads))
        py.append(python_loop(scene, a.worlds, a.steps, a.warmup, a.threads))
        print(f"repeat {r}: sap_bench {cpp[-1]:,.0f} world-steps/s, python {py[-1]:,.0f} world-steps/s", flush=True)
    c, q = statistics.median(cpp), statistics.median(py)
    print(f"median: sap_bench {c:,.0f}, python {q:,.0f} world-steps/s; overhead {100 * (1 - q / c):+.2f} %")


if __name__ == "__main__":
    main()
