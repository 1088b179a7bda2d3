#!/usr/bin/env python3
"""CPU speed per core, side by side (issue 33): our sap_bench against MuJoCo's mj_step and
Drake's SAP on the same model files, one thread each, alternating paired runs.

    tools/checks/cpu_vs_mujoco.py [--build build-cpu] [--pairs 5] [--worlds 16] [--steps 2000]
        [--models humanoid,g1,panda] [--preset approx32] [--drake] [--threads-check]
        [--pin CPU] [--json OUT]

Three comparisons, each as pairs run back to back (A then B, --pairs times; the ratio is taken
pair by pair so that a drift of the shared machine's speed between pairs cancels; median, min
and max of the ratios are printed):

* MuJoCo (default): per model (the humanoid with its tendons, the Unitree G1 on flat ground, the
  Panda with its cube; the committed files in models/), `sap_bench MODEL --threads 1 --worlds W
  --steps S --preset P` against `mujoco_step_loop MODEL W S` (tools/checks/mujoco_step_loop.c,
  compiled here against the headers and libmujoco of the `mujoco` wheel, 4.0.0): W independent
  mjData stepped in lock-step by mj_step in a C loop, so no Python is timed. Both start at the
  model's qpos0 at rest with zero controls, take the same 10 untimed warm-up steps and time the
  same W x S world-steps with a monotonic clock around the stepping loop only (model loading and
  allocation outside), on one thread. Figure: world-steps per second, ours / MuJoCo.
* Drake (--drake): the humanoid without its tendons (Drake's MJCF parser has none): our `drake`
  preset (`sap_bench --preset drake --threads 1`) against Drake's discrete SAP
  (MultibodyPlant from Drake's own MJCF parser, time step 5 ms, the same contact approximation,
  Simulator::AdvanceTo in C++ for the timed steps, one world), per world.
* Threads (--threads-check): `sap_bench humanoid.xml --worlds 1024 --threads 2` against
  `--threads 1`.

The physics of the engines differ (MuJoCo's soft constraints and contact set, Drake's geometry
engine), so the work figures of each (contacts per world, solver iterations) are printed beside
the speed. --pin CPU runs both commands under `taskset -c CPU`. The machine's load average is
recorded at the start and the end: on a shared machine, quote the ratios, not the absolute rates.
"""
import argparse
import atexit
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {
    "humanoid": "models/mujoco_humanoid/humanoid.xml",
    "g1": "models/unitree_g1/scene_flat.xml",
    "panda": "models/franka_emika_panda/mjx_single_cube.xml",
    "pile": "scenes/sphere_pile.xml",  # 64 free spheres (nv 384): not in the default set (slow)
}
MUJOCO_VERSION = "4.0.0"
LOOP_SRC = os.path.join(ROOT, "tools", "checks", "mujoco_step_loop.c")


def die(msg):
    sys.exit("cpu_vs_mujoco: " + msg)


# ----------------------------------------------------------------------------------------------
# MuJoCo: the wheel's headers and library, the C loop built against them.
# ----------------------------------------------------------------------------------------------
def mujoco_package_dir(python):
    r = subprocess.run([python, "-c", "import mujoco, os; print(mujoco.__version__); print(os.path.dirname(mujoco.__file__))"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, None
    version, path = r.stdout.split()
    return version, path


def ensure_mujoco(python):
    """The `mujoco` wheel's package folder: from PYTHON if it has it, else from <repo>/.venv-mujoco
    (created and filled from PyPI on first use)."""
    version, path = mujoco_package_dir(python)
    if path is None:
        venv = os.path.join(ROOT, ".venv-mujoco")
        vpy = os.path.join(venv, "bin", "python")
        if not os.path.exists(vpy):
            print(f"[setup] creating {venv} with mujoco=={MUJOCO_VERSION}", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        version, path = mujoco_package_dir(vpy)
        if path is None:
            subprocess.run([vpy, "-m", "pip", "install", "-q", f"mujoco=={MUJOCO_VERSION}"], check=True)
            version, path = mujoco_package_dir(vpy)
    if path is None:
        die("could not import mujoco (pip install mujoco==%s)" % MUJOCO_VERSION)
    if version != MUJOCO_VERSION:
        print(f"[note] mujoco {version}, not {MUJOCO_VERSION}", file=sys.stderr)
    return version, path


def build_loop(mujoco_dir, out_dir):
    libs = [f for f in os.listdir(mujoco_dir) if re.match(r"libmujoco\.so(\.\d+)*$", f)]
    if not libs:
        die(f"no libmujoco.so in {mujoco_dir}")
    exe = os.path.join(out_dir, "mujoco_step_loop")
    if os.path.exists(exe) and os.path.getmtime(exe) > os.path.getmtime(LOOP_SRC):
        return exe
    cc = shutil.which("cc") or shutil.which("gcc") or die("no C compiler (apt-get install build-essential)")
    cmd = [cc, "-O2", "-o", exe, LOOP_SRC, "-I" + os.path.join(mujoco_dir, "include"), "-L" + mujoco_dir,
           "-l:" + sorted(libs)[-1], "-Wl,-rpath," + mujoco_dir]
    subprocess.run(cmd, check=True)
    return exe


# ----------------------------------------------------------------------------------------------
# Running one side: a child process, its JSON record, its CPU time.
# ----------------------------------------------------------------------------------------------
# Both sides' executables run from copies written in one sequential pass (a folder of this run):
# on the machine of the issue-33 records an executable as the linker left it in the page cache
# ran ~15 % slower than a byte-identical copy of it (0.69 against 0.59 s, humanoid, 16 worlds x
# 2000 steps; `cp` of the file made it fast), so timing the build's file measured the page
# cache's state, not the code. MuJoCo's library comes from its wheel (written sequentially).
_COPIES = {}
_COPY_DIR = tempfile.mkdtemp(prefix="cpu_vs_mujoco_")
atexit.register(shutil.rmtree, _COPY_DIR, True)


def sequential_copy(path):
    if path not in _COPIES:
        dst = os.path.join(_COPY_DIR, "%d_%s" % (len(_COPIES), os.path.basename(path)))
        shutil.copyfile(path, dst)
        shutil.copymode(path, dst)
        _COPIES[path] = dst
    return _COPIES[path]


def bench_exe(build):
    return sequential_copy(os.path.join(build, "sap_bench"))


def run_child(cmd, pin=None):
    if pin is not None:
        cmd = ["taskset", "-c", str(pin)] + cmd
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    wall = time.monotonic() - t0
    if p.returncode not in (0, 3):
        die("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), err[-2000:]))
    return out, wall


def ours(build, model, worlds, steps, threads, preset, pin, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "r.json")
        cmd = [bench_exe(build), model, "--backend", "cpu", "--threads", str(threads),
               "--worlds", str(worlds), "--steps", str(steps), "--warmup", "10", "--preset", preset,
               "--stats-every", "0", "--quiet", "--json", js] + list(extra)
        run_child(cmd, pin)
        with open(js) as f:
            r = json.load(f)
    return {"world_steps_per_s": r["world_steps_per_s"], "wall_s": r["wall_s"],
            "digest": r.get("final_state", {}).get("digest"), "failed_worlds": r.get("failed_worlds"),
            "command": " ".join([os.path.join(build, "sap_bench")] + cmd[1:-3])}


def ours_stats(build, model, worlds, steps, preset, extra=()):
    """One statistics pass: stage times (ms per lock-step step) and solver figures."""
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "r.json")
        cmd = [bench_exe(build), model, "--backend", "cpu", "--threads", "1", "--worlds", str(worlds),
               "--steps", str(steps), "--warmup", "10", "--preset", preset, "--stats-every", "1", "--quiet",
               "--json", js] + list(extra)
        run_child(cmd)
        with open(js) as f:
            r = json.load(f)
    n = worlds
    stages = {k: 1000.0 * v / n for k, v in (r.get("stages_ms") or {}).items()}  # us per world-step
    st = r.get("stats") or {}
    return {"us_per_world_step": stages, "newton_mean": st.get("newton_iterations", {}).get("mean"),
            "line_search_mean": st.get("line_search_iterations", {}).get("mean"),
            "contacts_per_world": st.get("contacts_per_world", {}).get("mean"), "pairs": r.get("collision", {}).get("pairs")}


def mujoco_loop(exe, model, worlds, steps, pin, timers=False):
    out, _ = run_child([sequential_copy(exe), model, str(worlds), str(steps), "10"] + (["--timers"] if timers else []), pin)
    return json.loads(out.strip().splitlines()[-1])


# The stages side by side (--stages): ours from sap_bench's stage timers, MuJoCo's from its own
# timers (mjData.timer), grouped by the work they do. MuJoCo's kinematics (mj_kinematics, mj_comPos,
# tendons, transmission) serve its collision and its dynamics alike; ours are computed in the
# collide stage (fp64, for the narrow phase) and again in free motion (the approximate presets'
# dynamics precision), so the groups compare whole stages, not single functions.
STAGE_ROWS = [
    ("collision (ours: with fp64 forward kinematics)", ["collide"], ["pos_collision"]),
    ("dynamics before the solve (ours: free motion, with kinematics; MuJoCo: kinematics, inertia, "
     "velocity, actuation)", ["free_motion"], ["pos_kinematics", "pos_inertia", "velocity", "actuation"]),
    ("constraint setup (MuJoCo: make, project)", ["contact_setup"], ["pos_make", "pos_project"]),
    ("solve", ["solve"], ["constraint"]),
    ("integrate", ["integrate"], ["advance"]),
]


def print_stage_table(name, ours_us, mj_us):
    print(f"\n{name}: us per world-step by stage (ours: sap_bench's stage timers; MuJoCo: its timers, "
          "which add their clock calls)")
    print("| stage | ours | MuJoCo |")
    print("|---|---:|---:|")
    for label, ok, mk in STAGE_ROWS:
        print("| %s | %.2f | %.2f |" % (label, sum(ours_us.get(k, 0.0) for k in ok), sum(mj_us.get(k, 0.0) for k in mk)))
    print("| whole step | %.2f | %.2f |" % (ours_us.get("total", 0.0), mj_us.get("step", 0.0)))


def summary(ratios):
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios), "pairs": ratios}


# ----------------------------------------------------------------------------------------------
# Drake: the humanoid without tendons, Drake's MJCF parser, discrete SAP, one world.
# ----------------------------------------------------------------------------------------------
DRAKE_SCRIPT = r"""
import json, sys, time
from pydrake.all import (AddMultibodyPlant, DiagramBuilder, MultibodyPlantConfig, Parser, Simulator)
path, dt, warmup, steps, approx = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
builder = DiagramBuilder()
plant, sg = AddMultibodyPlant(MultibodyPlantConfig(time_step=dt, discrete_contact_approximation=approx), builder)
Parser(plant).AddModels(path)
plant.Finalize()
diagram = builder.Build()
sim = Simulator(diagram)
ctx = sim.get_mutable_context()
pc = plant.GetMyMutableContextFromRoot(ctx)
if plant.num_actuated_dofs() > 0:
    import numpy as np
    plant.get_actuation_input_port().FixValue(pc, np.zeros(plant.num_actuated_dofs()))
sim.Initialize()
sim.AdvanceTo(warmup * dt)
t0 = time.perf_counter()
sim.AdvanceTo((warmup + steps) * dt)
wall = time.perf_counter() - t0
from importlib.metadata import version
contacts = plant.get_contact_results_output_port().Eval(pc).num_point_pair_contacts()
print(json.dumps({"world_steps_per_s": steps / wall, "wall_s": wall, "nv": plant.num_velocities(),
                  "contacts_last_step": contacts, "drake": version("drake"), "approximation": approx}))
"""


def strip_tendons(src, dst):
    """The model without <tendon> (and anything naming a tendon: Drake's parser has no tendons)."""
    with open(src) as f:
        xml = f.read()
    xml = re.sub(r"<tendon>.*?</tendon>", "", xml, flags=re.S)
    xml = re.sub(r"<[^<>]*\btendon=\"[^\"]*\"[^<>]*/>", "", xml)
    with open(dst, "w") as f:
        f.write(xml)


def drake_python(arg):
    if arg:
        return arg
    if subprocess.run([sys.executable, "-c", "import pydrake.all"], capture_output=True).returncode == 0:
        return sys.executable
    sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
    from drake.bootstrap import setup_venv  # the project's pinned Drake wheel in .venv-drake
    return setup_venv()


def drake_run(python, model, dt, steps, approx, pin):
    cmd = [python, "-c", DRAKE_SCRIPT, model, repr(dt), "10", str(steps), approx]
    out, _ = run_child(cmd, pin)
    return json.loads(out.strip().splitlines()[-1])


# ----------------------------------------------------------------------------------------------
def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build-cpu"), help="folder holding sap_bench")
    p.add_argument("--models", default="humanoid,g1,panda", help="comma-separated: " + ", ".join(MODELS))
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--worlds", type=int, default=16)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--preset", default="approx32")
    p.add_argument("--set", action="append", default=[], help="extra sap_bench --set key=value for our side")
    p.add_argument("--no-mujoco", action="store_true", help="skip the MuJoCo comparison")
    p.add_argument("--stages", action="store_true",
                   help="also one statistics pass of ours and one timer pass of MuJoCo per model: stage tables")
    p.add_argument("--drake", action="store_true", help="drake preset vs Drake's SAP on the humanoid without tendons")
    p.add_argument("--drake-steps", type=int, default=400, help="timed steps of one Drake world")
    p.add_argument("--drake-worlds", type=int, default=16, help="our worlds in the Drake comparison")
    p.add_argument("--drake-approximation", default="lagged", help="sap, similar or lagged (both sides)")
    p.add_argument("--drake-python", default=None, help="a Python with pydrake (default: this one, else .venv-drake)")
    p.add_argument("--threads-check", action="store_true", help="2 threads vs 1 on 1024 humanoid worlds")
    p.add_argument("--thread-worlds", type=int, default=1024)
    p.add_argument("--thread-steps", type=int, default=100)
    p.add_argument("--mujoco-python", default=sys.executable, help="a Python with the mujoco wheel")
    p.add_argument("--pin", default=None, help="run both sides under taskset -c PIN")
    p.add_argument("--json", default=None)
    a = p.parse_args()
    if not os.path.exists(os.path.join(a.build, "sap_bench")):
        die(f"no sap_bench in {a.build} (tools/setup.sh --cpu-only builds build-cpu/)")
    extra = []
    for kv in a.set:
        extra += ["--set", kv]
    record = {"tool": "cpu_vs_mujoco", "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "load_start": os.getloadavg(),
              "cpu_model": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), ""),
              "pairs": a.pairs, "worlds": a.worlds, "steps": a.steps, "preset": a.preset, "set": a.set}
    git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    record["commit"] = git.stdout.strip()

    if not a.no_mujoco:
        version, mjdir = ensure_mujoco(a.mujoco_python)
        exe = build_loop(mjdir, a.build)
        record["mujoco_version"] = version
        record["mujoco"] = {}
        print(f"ours ({a.preset}, sap_bench --threads 1) vs MuJoCo {version} mj_step (C loop), one thread, "
              f"{a.worlds} worlds x {a.steps} steps, {a.pairs} pairs")
        print("| model | ours world-steps/s | MuJoCo world-steps/s | ours / MuJoCo median (min-max) | contacts ours / MuJoCo |")
        print("|---|---:|---:|---|---|")
        for name in a.models.split(","):
            model = os.path.join(ROOT, MODELS[name])
            rows = []
            for _ in range(a.pairs):
                o = ours(a.build, model, a.worlds, a.steps, 1, a.preset, a.pin, extra)
                mj = mujoco_loop(exe, model, a.worlds, a.steps, a.pin)
                rows.append((o, mj))
            ratios = [o["world_steps_per_s"] / mj["world_steps_per_s"] for o, mj in rows]
            entry = {"model": MODELS[name], "ratio": summary(ratios),
                     "ours_world_steps_per_s": [o["world_steps_per_s"] for o, _ in rows],
                     "mujoco_world_steps_per_s": [mj["world_steps_per_s"] for _, mj in rows],
                     "ours_command": rows[0][0]["command"], "mujoco_record": rows[-1][1]}
            if a.stages:
                entry["ours_stats"] = ours_stats(a.build, model, a.worlds, a.steps, a.preset, extra)
                entry["mujoco_timers"] = mujoco_loop(exe, model, a.worlds, a.steps, a.pin, timers=True).get(
                    "timers_us_per_world_step", {})
            record["mujoco"][name] = entry
            c_ours = entry.get("ours_stats", {}).get("contacts_per_world")
            print("| %s | %.0f | %.0f | %.2f (%.2f-%.2f) | %s / %.1f |" % (
                name, statistics.median(entry["ours_world_steps_per_s"]),
                statistics.median(entry["mujoco_world_steps_per_s"]), entry["ratio"]["median"], entry["ratio"]["min"],
                entry["ratio"]["max"], "%.1f" % c_ours if c_ours is not None else "-",
                rows[-1][1]["contacts_per_world"]))
            sys.stdout.flush()
        if a.stages:
            for name in a.models.split(","):
                e = record["mujoco"][name]
                print_stage_table(name, e["ours_stats"]["us_per_world_step"], e["mujoco_timers"])

    if a.drake:
        py = drake_python(a.drake_python)
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "humanoid_no_tendons.xml")
            strip_tendons(os.path.join(ROOT, MODELS["humanoid"]), model)
            rows = []
            for _ in range(a.pairs):
                o = ours(a.build, model, a.drake_worlds, a.drake_steps, 1, "drake", a.pin,
                         extra + ["--set", "contact_approximation=" + a.drake_approximation])
                dk = drake_run(py, model, 0.005, a.drake_steps, a.drake_approximation, a.pin)
                rows.append((o, dk))
        ratios = [o["world_steps_per_s"] / dk["world_steps_per_s"] for o, dk in rows]
        record["drake"] = {"approximation": a.drake_approximation, "ratio": summary(ratios),
                           "ours_world_steps_per_s": [o["world_steps_per_s"] for o, _ in rows],
                           "drake_world_steps_per_s": [dk["world_steps_per_s"] for _, dk in rows],
                           "drake_record": rows[-1][1]}
        print(f"\ndrake preset vs Drake {rows[-1][1]['drake']} SAP ({a.drake_approximation}), humanoid without tendons, "
              f"per world, one thread: ours {statistics.median(record['drake']['ours_world_steps_per_s']):.0f}, Drake "
              f"{statistics.median(record['drake']['drake_world_steps_per_s']):.0f} world-steps/s; ratio median "
              f"{record['drake']['ratio']['median']:.2f} ({record['drake']['ratio']['min']:.2f}-{record['drake']['ratio']['max']:.2f})")

    if a.threads_check:
        model = os.path.join(ROOT, MODELS["humanoid"])
        rows = []
        for _ in range(a.pairs):
            two = ours(a.build, model, a.thread_worlds, a.thread_steps, 2, a.preset, None, extra)
            one = ours(a.build, model, a.thread_worlds, a.thread_steps, 1, a.preset, None, extra)
            rows.append((two, one))
        ratios = [t["world_steps_per_s"] / o["world_steps_per_s"] for t, o in rows]
        record["threads"] = {"worlds": a.thread_worlds, "steps": a.thread_steps, "ratio": summary(ratios),
                             "two_world_steps_per_s": [t["world_steps_per_s"] for t, _ in rows],
                             "one_world_steps_per_s": [o["world_steps_per_s"] for _, o in rows]}
        print(f"\n2 threads / 1 thread, humanoid, {a.thread_worlds} worlds: median {record['threads']['ratio']['median']:.2f} "
              f"({record['threads']['ratio']['min']:.2f}-{record['threads']['ratio']['max']:.2f})")

    record["load_end"] = os.getloadavg()
    print("\nload average at start %.1f, at end %.1f (%d cores)" % (record["load_start"][0], record["load_end"][0],
                                                                     os.cpu_count()))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
