#!/usr/bin/env python3
"""Survey of public robot and object models outside the CI corpora (issue 29): which load and
step, and why the others do not, grouped by cause.

Fetches PyPI wheels into a cache outside the repository (~/.cache/sap-model-survey, or
$SAP_MODEL_SURVEY_CACHE) with `pip download --no-deps` and unpacks them: dm-control (suite,
locomotion walkers and arenas, manipulation props), mjlab (its robot zoo and tasks) and pybullet
(pybullet_data: URDF robots and objects, and its MJCF files). gymnasium-robotics and
example-robot-data are the CI corpora (tools/robot_corpus.py, docs/robots.md) and are not
repeated here. mujoco-menagerie's wheel holds only a downloader (the models are fetched at run
time from outside PyPI) and robot_descriptions clones git repositories at run time: neither can be
surveyed offline.

A model is a top-level MJCF file that MuJoCo compiles to at least one body, or a URDF. Each is
run with the project's sap_bench on the CPU, one world, strict load (unsupported elements are
errors), on approx32 and drake for --steps steps; URDFs get a ground plane, and a free base when
pybullet would give one (pybullet_data: every object, as loadURDF's default useFixedBase=False)
or when robot_corpus.FLOATING_BASE matches. Each row records MuJoCo's verdict on the same file
(compiles or its error), our load error or step status, and a cause class (CAUSES below: a
regular expression on the message). pybullet_data's random_urdfs (1,000 generated objects of one
template) are sampled (--random-urdfs, default 40).

Writes a Markdown report (--out, default bench/results/model_survey_<commit>.md); the raw
results (with the cache's paths) go to <cache>/results_<commit>.json.

  tools/checks/model_survey.py --build build-cpu [--steps 500] [--jobs 2] [--only REGEX]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import robot_corpus  # noqa: E402  (run_bench, FLOATING_BASE)

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ["dm-control", "mjlab", "pybullet"]
PRESETS = ["approx32", "drake"]

# Cause classes, first match wins: (name, regex on our error or status text).
CAUSES = [
    ("no degrees of freedom", r"no degrees of freedom"),
    (".msh mesh file", r"\.msh"),
    ("flat/degenerate mesh hull", r"span no volume|convex hull|qhull|fewer than 4 points"),
    ("mesh file unreadable", r"cannot read mesh|no triangles"),
    ("joint springdamper", r"springdamper"),
    ("fluid forces (density/viscosity)", r"fluid|option density|viscosity"),
    ("singular/invalid inertia", r"inertia|positive (semi-)?definite|mass"),
    ("URDF spherical joint", r"spherical"),
    ("URDF limits lower > upper", r"lower.*upper|upper.*lower"),
    ("URDF malformed vector / xacro", r"\$\(|expected \d numbers|numbers"),
    ("condim 4/6 (torsional/rolling)", r"condim"),
    ("tendon", r"tendon"),
    ("equality constraint", r"equality|<connect|<weld"),
    ("actuator / dynamics feature", r"actuator|dyntype|gaintype|biastype|<motor|<position|<velocity|<general"),
    ("flex / composite / plugin", r"flex|composite|plugin|skin"),
    ("sensor / site / other element", r"sensor|site"),
    ("unsupported element (other)", r"not supported|unsupported|dropped"),
    ("file reference", r"no such file|cannot open"),
    ("failed world or non-finite state", r"failed|non.?finite|nan"),
    ("timeout", r"timeout"),
]


def log(msg):
    print("model_survey: " + msg, file=sys.stderr, flush=True)


def cache_dir():
    return Path(os.environ.get("SAP_MODEL_SURVEY_CACHE", Path.home() / ".cache" / "sap-model-survey"))


def fetch(cache):
    cache.mkdir(parents=True, exist_ok=True)
    roots = {}
    for pkg in PACKAGES:
        stem = pkg.replace("-", "_")
        whl = sorted(cache.glob(stem + "-*.whl"))
        if not whl:
            log("downloading " + pkg)
            r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache), pkg],
                               capture_output=True, text=True, timeout=900)
            if r.returncode != 0:
                log("cannot download %s: %s" % (pkg, (r.stderr.strip().splitlines() or ["?"])[-1]))
                continue
            whl = sorted(cache.glob(stem + "-*.whl"))
        dest = cache / "unpacked" / stem
        if not (dest / ".complete").exists():
            with zipfile.ZipFile(whl[-1]) as z:
                z.extractall(dest)
            (dest / ".complete").write_text(whl[-1].name + "\n")
        roots[pkg] = (dest, whl[-1].name)
    return roots


MUJOCO_CHECK = r"""
import json, sys, mujoco
out = {}
for p in sys.argv[1:]:
    try:
        m = mujoco.MjModel.from_xml_path(p)
        out[p] = {"ok": True, "nv": int(m.nv), "nbody": int(m.nbody)}
    except Exception as e:
        out[p] = {"ok": False, "error": (str(e).splitlines() or [type(e).__name__])[0]}
print(json.dumps(out))
"""


def mujoco_verdicts(py, files):
    out = {}
    for i in range(0, len(files), 200):
        chunk = files[i:i + 200]
        r = subprocess.run([str(py), "-c", MUJOCO_CHECK] + chunk, capture_output=True, text=True, timeout=1800)
        try:
            out.update(json.loads(r.stdout))
        except json.JSONDecodeError:
            for f in chunk:
                out[f] = {"ok": False, "error": "MuJoCo crashed or printed no verdict"}
    return out


def cause_of(text):
    for name, rx in CAUSES:
        if re.search(rx, text or "", re.IGNORECASE):
            return name
    return "other"


def run_one(bench, path, floating, steps, timeout):
    extra = (["--ground"] if path.endswith(".urdf") else []) + (["--floating-base"] if floating else [])
    res = {"model": path, "floating": floating, "presets": {}}
    for preset in PRESETS:
        r = robot_corpus.run_bench(bench, path, preset, steps, timeout, extra)
        res["presets"][preset] = r
        if r["status"] == "error":  # a load error is the same for every preset
            break
    first = next(iter(res["presets"].values()))
    if first["status"] == "error":
        res["status"], res["message"] = "load error", first.get("error", "")
    elif first["status"] == "timeout":
        res["status"], res["message"] = "timeout", "timeout"
    else:
        bad = [p for p, r in res["presets"].items() if r["status"] != "ok"]
        res["status"] = "ok" if not bad else "failed"
        res["message"] = "" if not bad else "failed or non-finite on " + ",".join(bad)
    res["cause"] = None if res["status"] == "ok" else cause_of(res["message"])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(REPO / "build-cpu"))
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--random-urdfs", type=int, default=40, help="sample of pybullet_data/random_urdfs")
    ap.add_argument("--only", help="regex on the model path")
    ap.add_argument("--mujoco-python", help="a Python with mujoco (default: robot_corpus's cache venv)")
    ap.add_argument("--out")
    a = ap.parse_args()
    bench = Path(a.build) / "sap_bench"
    if not bench.exists():
        log("%s not found" % bench)
        return 2
    cache = cache_dir()
    roots = fetch(cache)
    if not roots:
        log("skipped: no wheel could be fetched (offline?)")
        return 0
    py = Path(a.mujoco_python) if a.mujoco_python else robot_corpus.mujoco_python(robot_corpus.cache_dir())
    xmls, urdfs = [], []
    for pkg, (root, _) in roots.items():
        xmls += sorted(str(p) for p in root.rglob("*.xml") if "test" not in p.parts and "tests" not in p.parts)
        u = sorted(str(p) for p in root.rglob("*.urdf"))
        rnd = [f for f in u if "/random_urdfs/" in f]
        urdfs += [f for f in u if "/random_urdfs/" not in f] + rnd[:: max(1, len(rnd) // max(1, a.random_urdfs))][: a.random_urdfs]
    if a.only:
        xmls = [f for f in xmls if re.search(a.only, f)]
        urdfs = [f for f in urdfs if re.search(a.only, f)]
    verdict = mujoco_verdicts(py, xmls + urdfs) if py else {}
    models = [(f, False) for f in xmls if verdict.get(f, {}).get("ok") and verdict[f]["nbody"] > 1]
    for f in urdfs:
        floating = "/pybullet_data/" in f or bool(robot_corpus.FLOATING_BASE.search(f))
        models.append((f, floating))
    log("%d MJCF models (of %d .xml), %d URDFs; %d steps on %s" % (
        sum(1 for f, _ in models if f.endswith(".xml")), len(xmls), len(urdfs), a.steps, ",".join(PRESETS)))
    results = []
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(run_one, bench, f, fl, a.steps, a.timeout) for f, fl in models]
        for fut in concurrent.futures.as_completed(futs):
            r = fut.result()
            r["mujoco"] = verdict.get(r["model"])
            results.append(r)
            if len(results) % 25 == 0:
                log("%d/%d (%.0f s)" % (len(results), len(models), time.monotonic() - t0))
    rel = lambda p: re.sub(r"^.*/unpacked/", "", p)  # noqa: E731
    results.sort(key=lambda r: rel(r["model"]))
    commit = subprocess.run(["git", "-C", str(Path(a.build).resolve().parent), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    out = Path(a.out or REPO / "bench" / "results" / ("model_survey_%s.md" % commit))
    # Report: per package and kind, then per cause with examples, then the table.
    lines = ["# Model survey (%s)" % commit, "",
             "Generated by `tools/checks/model_survey.py --steps %d` with the build of commit %s: public models" % (a.steps, commit),
             "outside the CI corpora, each loaded strictly and stepped on %s (one world, CPU)." % " and ".join(PRESETS),
             "Wheels: " + ", ".join(w for _, w in roots.values()) + "; MuJoCo's verdict from its Python package.", ""]
    groups = {}
    for r in results:
        pkg = rel(r["model"]).split("/")[0]
        kind = "URDF" if r["model"].endswith(".urdf") else "MJCF"
        mj_ok = bool(r["mujoco"] and r["mujoco"]["ok"])
        g = groups.setdefault((pkg, kind), {"n": 0, "ok": 0, "mj_ok": 0, "ok_of_mj_ok": 0})
        g["n"] += 1
        g["ok"] += r["status"] == "ok"
        g["mj_ok"] += mj_ok
        g["ok_of_mj_ok"] += mj_ok and r["status"] == "ok"
    lines += ["| package | kind | files | MuJoCo compiles | load strictly and run clean | of those MuJoCo compiles |",
              "|---|---|---|---|---|---|"]
    for (pkg, kind), g in sorted(groups.items()):
        lines.append("| %s | %s | %d | %d | %d | %d of %d (%.0f %%) |" % (
            pkg, kind, g["n"], g["mj_ok"], g["ok"], g["ok_of_mj_ok"], g["mj_ok"],
            100.0 * g["ok_of_mj_ok"] / max(1, g["mj_ok"])))
    causes = {}
    for r in results:
        if r["status"] != "ok":
            causes.setdefault(r["cause"], []).append(r)
    lines += ["", "## Causes (files MuJoCo compiles / all files)", "", "| cause | files | MuJoCo compiles | example message |",
              "|---|---|---|---|"]
    for c, rs in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        ex = rs[0]
        lines.append("| %s | %d | %d | %s: %s |" % (c, len(rs), sum(1 for r in rs if r["mujoco"] and r["mujoco"]["ok"]),
                                                    rel(ex["model"]), robot_corpus.shorten(ex["message"])[:200].replace("|", "/")))
    lines += ["", "## Every model", "", "| model | MuJoCo | ours | cause | message |", "|---|---|---|---|---|"]
    for r in results:
        mj = r["mujoco"] or {}
        mjs = ("ok nv %d" % mj["nv"]) if mj.get("ok") else ("error: " + (mj.get("error") or "?")[:80])
        lines.append("| %s%s | %s | %s | %s | %s |" % (
            rel(r["model"]), " (free)" if r["floating"] else "", mjs.replace("|", "/"), r["status"], r["cause"] or "",
            robot_corpus.shorten(r["message"])[:160].replace("|", "/")))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    (cache / ("results_%s.json" % commit)).write_text(json.dumps(results, indent=0))  # raw, with local paths
    log("wrote %s (%.0f s)" % (out, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
