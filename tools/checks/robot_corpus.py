#!/usr/bin/env python3
"""Public robot corpus (issue 18): robots that nobody here wrote, loaded and stepped as they are.

Fetches the PyPI wheels gymnasium-robotics 1.4.2 (MJCF robots), dm-control 1.0.34 (the MJCF
models of its suite) and example-robot-data 6.0.0 (URDF robots) into a cache outside the repository (~/.cache/sap-robot-corpus, or
$SAP_ROBOT_CORPUS_CACHE) with `pip download --no-deps`, unpacks them, and for

  * every top-level MJCF file of gymnasium-robotics, and the .xml files directly in
    dm_control/suite/ (the suite's models; its other folders are the locomotion and
    manipulation libraries, assembled in Python; its lqr.xml is a template that compiles to the world
    alone): the .xml files that MuJoCo's own Python package compiles
    (mujoco.MjModel.from_xml_path; installed with pip into <cache>/venv, never into the
    repository) to a model with at least one body. Files that MuJoCo rejects, or compiles to
    the world body alone (fetch/robot.xml), are pieces included by other files and not models;
  * every URDF file, with the base rule: a floating base (free joint on the root link) for
    legged robots, humanoids, mobile bases and aerial robots (FLOATING_BASE below, matched on
    the path), a fixed base (root welded to the world) for arms, hands and pendulums;

runs `sap_bench MODEL --steps N` on the CPU, one world, for each preset (approx32, approx64,
drake). The load is strict first (unsupported elements are errors, as for a user); when the
strict load fails the error is recorded and the model is run again with --drop-unsupported,
so that the table still says what runs once the unsupported elements are dropped (and which
those are). Models run 2 at a time, each sap_bench call under a timeout.

Writes the table (model, nv, geoms by type, contacts/step, status, dropped elements, time) to
docs/robots.md (--out), or only prints it with --no-write. --subset runs a few models for CI
(.ci/run) and fails when one of them does not load strictly or has a failed world.
Offline (pip cannot reach PyPI and nothing is cached): prints a message and exits 0.

Scenarios (both modes, after the fetch): the test binary test_robot_scenarios of the build
directory runs with the cache: the Shadow hand holds its block in the palm for 2 s and Fetch's
object rests on its table, from the gym environments' resets, on all three presets
(tests/test_robot_scenarios.cpp). Its figures go into the table's "Scenarios" section; a failure
fails the run.

  tools/checks/robot_corpus.py [--build build-cpu] [--steps 1000] [--jobs 2] [--timeout 300]
                        [--subset] [--only REGEX] [--no-write] [--out docs/robots.md]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WHEELS = {
    "gymnasium-robotics": ("gymnasium_robotics-1.4.2-py3-none-any.whl", "gymnasium-robotics==1.4.2"),
    "example-robot-data": ("example_robot_data-6.0.0-0-py3-none-any.whl", "example-robot-data==6.0.0"),
    "dm-control": ("dm_control-1.0.34-py3-none-any.whl", "dm-control==1.0.34"),
}
PRESETS = ["approx32", "approx64", "drake"]
# URDFs whose path matches get a floating base: legged robots, humanoids, mobile bases, aerial
# robots. Everything else (arms, hands, pendulums, fingers) is fixed to the world.
FLOATING_BASE = re.compile(
    r"/(a1|alexander|anymal[^/]*|b1|bolt|borinot|centauro|g1|go1|go2|hextilt|human|hyq[^/]*|icub[^/]*|iris[^/]*|"
    r"laikago|pr2|quadrotor[^/]*|quadruped|romeo[^/]*|simple_humanoid[^/]*|solo[^/]*|talos_full[^/]*|"
    r"talos_reduced[^/]*|tiago[^/]*)(_description)?(/|\.urdf$)")
# Files that are not loadable robot models as published, with the reason; they are not run and
# not counted, and docs/robots.md lists them under "Excluded". Keys match the end of the path.
EXCLUDED = {
    "ur_description/urdf/ur3.urdf":
        "not a robot: an empty `<robot>` left by xacro (a comment and no `<link>`); the UR3 is "
        "`ur3_robot.urdf` (also in the table)",
    "alex_description/urdf/alex_psyonic_hands.urdf":
        "invalid URDF: its 8 `<mimic>` elements name `index_q1`, `middle_q1`, `ring_q1`, `pinky_q1`, joints that "
        "do not exist; the file has `Left_index_q1` and `Right_index_q1` etc. (the xacro prefix was not applied "
        "to `<mimic>`), so which joint is meant would be a guess",
}
# CI subset (--subset): small models that load strictly today, one per kind.
SUBSET = [
    "gymnasium_robotics/envs/assets/point/point.xml",
    "gymnasium_robotics/envs/mujoco/assets/hopper.xml",
    "example-robot-data/robots/double_pendulum_description/urdf/double_pendulum_simple.urdf",
    "example-robot-data/robots/a1_description/urdf/a1.urdf",
    "dm_control/suite/cartpole.xml",
    "dm_control/suite/point_mass.xml",
    # issue 30's features: a spatial tendon with a limit, fluid forces
    "dm_control/suite/ball_in_cup.xml",
    "gymnasium_robotics/envs/mujoco/assets/swimmer.xml",
]


def excluded(path):
    """The reason a model file is excluded (EXCLUDED), or None."""
    for suffix, reason in EXCLUDED.items():
        if str(path).endswith("/" + suffix):
            return reason
    return None


def log(msg):
    print("robot_corpus: " + msg, file=sys.stderr, flush=True)


def cache_dir():
    return Path(os.environ.get("SAP_ROBOT_CORPUS_CACHE", Path.home() / ".cache" / "sap-robot-corpus"))


def fetch_wheels(cache):
    cache.mkdir(parents=True, exist_ok=True)
    missing = [spec for (whl, spec) in WHEELS.values() if not (cache / whl).exists()]
    if missing:
        log("downloading " + " ".join(missing) + " into " + str(cache))
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache)] + missing,
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            return False, (r.stderr.strip().splitlines() or ["pip download failed"])[-1]
    roots = {}
    for name, (whl, _) in WHEELS.items():
        dest = cache / "unpacked" / name
        if not (dest / ".complete").exists():
            with zipfile.ZipFile(cache / whl) as z:
                z.extractall(dest)
            (dest / ".complete").write_text("ok\n")
        roots[name] = dest
    return True, roots


def mujoco_python(cache):
    """A Python with mujoco: <cache>/venv (created on first use), or None when it cannot be had."""
    venv = cache / "venv"
    py = venv / "bin" / "python"
    if py.exists() and subprocess.run([str(py), "-c", "import mujoco"], capture_output=True).returncode == 0:
        return py
    log("installing mujoco into " + str(venv))
    if subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True).returncode != 0:
        return None
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "mujoco"], capture_output=True, text=True, timeout=900)
    return py if r.returncode == 0 else None


COMPILE_CHECK = r"""
import json, sys, mujoco
out = {}
for p in sys.argv[1:]:
    try:
        m = mujoco.MjModel.from_xml_path(p)
        out[p] = {"ok": True, "nv": int(m.nv), "nbody": int(m.nbody)}
    except Exception as e:
        out[p] = {"ok": False, "error": str(e).splitlines()[0] if str(e) else type(e).__name__}
print(json.dumps(out))
"""


def mjcf_models(root, py, pattern="**/*.xml"):
    files = sorted(str(p) for p in root.glob(pattern))
    if py is None:  # no MuJoCo: a top-level model has a <worldbody> under a <mujoco> root
        log("mujoco unavailable: top-level MJCF files chosen by their <mujoco><worldbody> structure")
        return [(f, None) for f in files if re.search(r"<mujoco[\s>][\s\S]*<worldbody", Path(f).read_text(errors="ignore"))]
    r = subprocess.run([str(py), "-c", COMPILE_CHECK] + files, capture_output=True, text=True, timeout=900)
    res = json.loads(r.stdout)
    # MuJoCo compiles some pieces (fetch/robot.xml: a <body> under <mujoco>) to an empty model
    # (the world body alone): only files that compile to at least one body are models.
    return [(f, res[f]["nv"]) for f in files if res[f]["ok"] and res[f]["nbody"] > 1]


def short_path(path, roots):
    if not roots:
        return shorten(path)
    for name, root in roots.items():
        try:
            rel = Path(path).relative_to(root)
        except ValueError:
            continue
        rel = str(rel)
        rel = re.sub(r"^cmeel\.prefix/share/", "", rel)
        return rel
    return path


def run_bench(bench, model, preset, steps, timeout, extra):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [str(bench), model, "--preset", preset, "--steps", str(steps), "--warmup", "0", "--worlds", "1",
               "--backend", "cpu", "--threads", "1", "--stats-every", "10", "--json", str(out), "--quiet"] + extra
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "time": time.monotonic() - t0}
        wall = time.monotonic() - t0
        if not out.exists():
            err = " ".join(r.stderr.split()) or "exit %d" % r.returncode
            err = re.sub(r"^.*?sap_bench: (error: )?", "", err).replace(model, Path(model).name)
            err = err.replace(" (ImportOptions::drop_unsupported drops it with a warning)", "")
            return {"status": "error", "error": err, "time": wall}
        j = json.loads(out.read_text())
        run = j["runs"][0] if "runs" in j else j
        stats = run.get("stats", {})
        return {
            "status": "ok" if run["failed_worlds"] == 0 and run["nonfinite_state_worlds"] == 0 else "failed",
            "time": wall,
            "nv": j["model"]["nv"],
            "geoms": j["model"].get("geom_types", {}),
            "contacts": stats.get("contacts_per_world", {}).get("mean"),
            "fp64_retry": run.get("fp64_retry", {}).get("steps", 0),
            "line_search_failed": stats.get("status_world_steps", {}).get("line_search_failed", 0),
            "warnings": j.get("warnings", []),
        }


def run_model(bench, model, floating, steps, timeout):
    # URDFs have no floor: sap_bench --ground puts the robot on a ground plane
    extra = (["--ground"] if model.endswith(".urdf") else []) + (["--floating-base"] if floating else [])
    res = {"model": model, "floating": floating, "strict_error": None, "presets": {}}
    for i, preset in enumerate(PRESETS):
        r = run_bench(bench, model, preset, steps, timeout, extra + (["--drop-unsupported"] if res["strict_error"] else []))
        if i == 0 and r["status"] == "error":  # strict load failed: record why, run with drops
            res["strict_error"] = r["error"]
            r = run_bench(bench, model, preset, steps, timeout, extra + ["--drop-unsupported"])
        res["presets"][preset] = r
    return res


def dropped_kinds(warnings):
    kinds = {}
    for w in warnings:
        m = re.search(r":\d+: (.*?) dropped: .*?(?: \((\d+) occurrences\))?$", w)
        if m:
            kinds[m.group(1)] = kinds.get(m.group(1), 0) + int(m.group(2) or 1)
    return ", ".join("%s x%d" % (k, n) for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))


def corpus_of(model):
    """The corpus a model file belongs to: mjcf (gymnasium-robotics), dm_control (its suite), urdf."""
    if model.endswith(".urdf"):
        return "urdf"
    return "dm_control" if "/dm_control/suite/" in model else "mjcf"


def shorten(text):
    """Paths into the unpacked wheels, as the table shows them (no cache directory)."""
    return re.sub(r"/\S*?/unpacked/[^/]+/(cmeel\.prefix/share/)?", "", text or "")


def run_scenarios(build, cache):
    """tests/test_robot_scenarios.cpp on the cached wheel: (ok, figure lines, output)."""
    exe = Path(build) / "test_robot_scenarios"
    if not exe.exists():
        return False, [], "%s not found (build it: cmake --build %s --target test_robot_scenarios)" % (exe, build)
    env = dict(os.environ, SAP_ROBOT_CORPUS_CACHE=str(cache))
    try:
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        return False, [], "test_robot_scenarios timed out"
    out = r.stdout + r.stderr
    lines = [l[len("scenario "):] for l in out.splitlines() if l.startswith("scenario ")]
    if "SKIPPED" in out and not lines:
        return False, [], out
    return r.returncode == 0, lines, out


def table(results, roots, steps, mj_note, scenarios=None, excluded_files=()):
    rows = []
    n_strict = {"mjcf": 0, "dm_control": 0, "urdf": 0}
    n_total = {"mjcf": 0, "dm_control": 0, "urdf": 0}
    n_all_ok = {"mjcf": 0, "dm_control": 0, "urdf": 0}
    skipped = []
    for res in results:
        if excluded(res["model"]):
            skipped.append(res["model"])
            continue
        kind = corpus_of(res["model"])
        n_total[kind] += 1
        p = res["presets"]
        first = next((r for r in p.values() if "nv" in r), None)
        status = []
        for name in PRESETS:
            r = p.get(name, {"status": "n/a"})
            s = r["status"]
            if s == "error":
                s = "error: " + shorten(r.get("error", ""))[:160]
            elif s == "ok" and r.get("fp64_retry"):
                s = "ok (%d fp64 retries)" % r["fp64_retry"]
            status.append("%s %s" % (name, s))
        all_ok = all(p[n]["status"] == "ok" for n in PRESETS)
        if res["strict_error"] is None:
            n_strict[kind] += 1
            if all_ok:
                n_all_ok[kind] += 1
        geoms = ", ".join("%s %d" % kv for kv in sorted(first["geoms"].items())) if first else ""
        contacts = "%.1f" % first["contacts"] if first and first["contacts"] is not None else ""
        load = "strict" if res["strict_error"] is None else "dropped: " + (dropped_kinds(first["warnings"]) if first else "")
        if res["strict_error"] is not None and not first:
            load = "error: " + shorten(res["strict_error"])[:200]
        elif res["strict_error"] is not None:
            load += " (strict: " + shorten(res["strict_error"])[:160] + ")"
        t = sum(r.get("time", 0) for r in p.values())
        rows.append("| %s%s | %s | %s | %s | %s | %s | %.1f |" % (
            short_path(res["model"], roots), " (floating)" if res["floating"] else "",
            first["nv"] if first else "", geoms, contacts, "<br>".join(status), load.replace("|", "/"), t))
    head = [
        "# Public robot corpus",
        "",
        "Generated by `tools/checks/robot_corpus.py` (issues 18, 30): every top-level MJCF model of",
        "gymnasium-robotics 1.4.2, the MJCF models of dm_control 1.0.34's suite (`dm_control/suite/*.xml`)",
        "and every URDF of example-robot-data 6.0.0, as published on PyPI,",
        "loaded strictly (unsupported elements are errors) and stepped %d steps on the CPU, one world," % steps,
        "for each preset. When the strict load fails, the row says why and the model is run with",
        "`--drop-unsupported` (the dropped elements are listed). " + mj_note,
        "URDFs get a floating base when they are legged robots, humanoids, mobile bases or aerial robots",
        "(`FLOATING_BASE` in the script), else a fixed one; a URDF has no floor, so `sap_bench --ground`",
        "adds a plane (a floating robot is lifted onto it at z = 0 by its geoms' bounding spheres, a fixed",
        "one keeps its base, the plane at min(0, lowest geom)). Models start at qpos0 with zero controls",
        "(URDFs declare no actuators), so arms fall under gravity and legged robots collapse or rest;",
        "a URDF joint whose zero lies outside its own limits (Kinova's joints 2, 3, 5; quadrupeds' knees)",
        "starts at its nearest limit (a scene note counts them; docs/benchmarks.md).",
        "",
        "Columns: nv; geoms by type; mean contacts per step (approx32, sampled every 10th step);",
        "status per preset (ok: 1,000 steps, no failed world, finite state; fp64 retries: steps whose",
        "fp32 stages failed and were repeated in fp64, docs/solver.md); load (strict, or what was",
        "dropped); wall time of the three runs in seconds (2 models at a time on a shared 2-core machine).",
        "",
        "Files that are not loadable robot models as published are listed under \"Excluded\" with the reason",
        "(`EXCLUDED` in the script) and are neither run nor counted.",
        "",
        "Summary: MJCF (gymnasium-robotics) %d of %d load strictly, %d of them run on all presets without a" % (
            n_strict["mjcf"], n_total["mjcf"], n_all_ok["mjcf"]),
        "failed world; dm_control suite %d of %d load strictly, %d of them run on all presets without a failed" % (
            n_strict["dm_control"], n_total["dm_control"], n_all_ok["dm_control"]),
        "world;",
        "URDF %d of %d load strictly, %d of them run on all presets without a failed world." % (
            n_strict["urdf"], n_total["urdf"], n_all_ok["urdf"]),
        "",
        "Regenerate: `tools/checks/robot_corpus.py --build build-cpu` (16 s to 2 minutes on 2 shared cores, with load;",
        "`--render-only` rewrites this file from the last run's results). Collision meshes are convex hulls",
        "(docs/model-import.md), colliding through the convex narrow phase (docs/collision.md).",
        "",
        "| model | nv | geoms | contacts/step | status | load | time (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    tail = []
    if scenarios:
        tail = ["", "## Scenarios", "",
                "`tests/test_robot_scenarios.cpp` (run by this script, and by `.ci/run` through `--subset`), from the",
                "gym environments' resets (`tools/reference/robot_scenarios_reference.py` says how each is reproduced and writes",
                "MuJoCo's figures for the same runs): the Shadow hand holds its block in the palm (0.4 s of the env's",
                "settling, then 2 s), Fetch's object rests on its table for 2 s. MuJoCo (same resets): the block ends",
                "at (1.0097, 0.8790, 0.1660) and moves 1.0 mm in the hold; Fetch's object compresses the table by",
                "0.2 mm, its gripper sags 0.6 mm. Our contact compression is 0.981 mm, what MuJoCo gives with",
                "`solimp` d = 0.5 (0.981 mm): the importer does not use `solimp` (docs/model-import.md, \"Compliance",
                "from solref\"), and the file's d = 0.9 to 0.95 divides a soft row's steady sag under a load by",
                "d / (1 - d) in MuJoCo. The gripper sags 7.0 mm on its mocap weld (21.7 mm while one weight,",
                "|W|_F / 6, mixed the weld's rotation rows into its translation rows); MuJoCo with d = 0.5 sags 2.5 mm.",
                "MuJoCo's soft row sags (1 - d) times our rule's (docs/sap-math.md §12.2; checked on a welded box in",
                "tests/test_holonomic.cpp), a factor 2 at d = 0.5; the remaining 1.4 is our weight of the translation",
                "rows, the diagonal estimate at the anchor (0.089), against MuJoCo's body_invweight0 from the full",
                "M^-1 at the com (0.046), and the arm's load on the weld, which still changes at 2 s. With the",
                "file's d = 0.947 MuJoCo sags 0.6 mm; solref \"-46580 -105.3\" (K d^2 / ((1 - d) d_max^2),",
                "docs/model-import.md) gives 1.5 mm here. Figures per preset:", ""]
        tail += ["- " + l for l in scenarios]
    # Excluded files: listed with their reason, not run, not counted.
    names = sorted(set(excluded_files) | {short_path(m, roots) for m in skipped})
    if names:
        tail += ["", "## Excluded (not counted)", "", "| file | reason |", "|---|---|"]
        tail += ["| %s | %s |" % (n, excluded(n)) for n in names]
    return "\n".join(head + rows + tail) + "\n", n_strict, n_all_ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(REPO / "build-cpu"), help="build directory with sap_bench")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per sap_bench run")
    ap.add_argument("--subset", action="store_true", help="CI subset; fails on a model that does not run")
    ap.add_argument("--only", help="regex on the model path")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--out", default=str(REPO / "docs" / "robots.md"))
    ap.add_argument("--render-only", action="store_true",
                    help="rewrite the table from the last full run's results (<cache>/results.json)")
    a = ap.parse_args()
    if a.render_only:
        saved = json.loads((cache_dir() / "results.json").read_text())
        text, _, _ = table(saved["results"], {}, saved["steps"], saved["mj_note"], saved.get("scenarios"),
                           saved.get("excluded", ()))
        Path(a.out).write_text(text)
        log("wrote " + a.out)
        return 0

    bench = Path(a.build) / "sap_bench"
    if not bench.exists():
        log("%s not found (build it: cmake --build %s --target sap_bench)" % (bench, a.build))
        return 2
    cache = cache_dir()
    try:
        ok, roots = fetch_wheels(cache)
    except (OSError, subprocess.SubprocessError, zipfile.BadZipFile) as e:
        ok, roots = False, str(e)
    if not ok:
        log("skipped: the wheels are not cached in %s and cannot be downloaded (offline?): %s" % (cache, roots))
        return 0
    gym = roots["gymnasium-robotics"]
    erd = roots["example-robot-data"]
    dmc = roots["dm-control"]

    models = []  # (path, floating)
    if a.subset:
        for rel in SUBSET:
            base = gym if rel.startswith("gymnasium") else dmc if rel.startswith("dm_control") else \
                erd / "cmeel.prefix" / "share"
            p = base / rel
            if not p.exists():
                log("subset model missing from the wheel: " + rel)
                return 1
            models.append((str(p), bool(FLOATING_BASE.search(str(p))) and p.suffix == ".urdf"))
        mj_note = ""
    else:
        py = mujoco_python(cache)
        mj_note = ("MJCF files are the ones MuJoCo %s compiles to at least one body (the others are included pieces)." %
                   subprocess.run([str(py), "-c", "import mujoco; print(mujoco.__version__)"], capture_output=True,
                                  text=True).stdout.strip() if py else
                   "MuJoCo was unavailable: MJCF files with a <worldbody> were taken as models.")
        models += [(f, False) for f, _ in mjcf_models(gym, py)]
        models += [(f, False) for f, _ in mjcf_models(dmc, py, "dm_control/suite/*.xml")]
        models += [(str(p), bool(FLOATING_BASE.search(str(p)))) for p in sorted(erd.rglob("*.urdf"))]
    if a.only:
        models = [m for m in models if re.search(a.only, m[0])]
    excluded_files = [short_path(m, roots) for m, _ in models if excluded(m)]
    for name in excluded_files:
        log("excluded (not run): %s: %s" % (name, excluded(name)))
    models = [m for m in models if not excluded(m[0])]
    log("%d models, %d steps, presets %s, %d at a time" % (len(models), a.steps, ",".join(PRESETS), a.jobs))

    results = []
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(run_model, bench, m, fl, a.steps, a.timeout): m for m, fl in models}
        for f in concurrent.futures.as_completed(futs):
            r = f.result()
            results.append(r)
            st = " ".join("%s:%s" % (k, v["status"]) for k, v in r["presets"].items())
            log("[%d/%d] %s %s%s" % (len(results), len(models), short_path(r["model"], roots), st,
                                     "" if r["strict_error"] is None else " (strict: %s)" % shorten(r["strict_error"])[:100]))
    for r in results:
        r["model"] = str(r["model"])
    results.sort(key=lambda r: (r["model"].endswith(".urdf"), short_path(r["model"], roots)))
    log("scenarios: test_robot_scenarios (Shadow hand holds its block, Fetch's object rests)")
    scen_ok, scenarios, scen_out = run_scenarios(a.build, cache)
    for l in scenarios:
        log("scenario " + l)
    if not scen_ok:
        log("scenarios FAILED:\n" + scen_out[-4000:])
    if not a.subset and not a.only:
        (cache / "results.json").write_text(json.dumps({"steps": a.steps, "mj_note": mj_note, "results": results,
                                                        "scenarios": scenarios, "excluded": excluded_files}))
    text, n_strict, n_all_ok = table(results, roots, a.steps, mj_note, scenarios, excluded_files)
    log("done in %.0f s" % (time.monotonic() - t0))
    if a.subset:
        print(text)
        bad = [r["model"] for r in results
               if r["strict_error"] is not None or any(p["status"] != "ok" for p in r["presets"].values())]
        for b in bad:
            log("FAILED: " + short_path(b, roots))
        return 1 if bad or not scen_ok else 0
    if a.no_write:
        print(text)
    else:
        Path(a.out).write_text(text)
        log("wrote " + a.out)
    return 0 if scen_ok else 1


if __name__ == "__main__":
    sys.exit(main())
