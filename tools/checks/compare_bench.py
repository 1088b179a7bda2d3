#!/usr/bin/env python3
"""Old and new sap_bench side by side: the same runs with two binaries, compared bit for bit.

For a refactoring that must not change the physics (a moved kernel, a new launch path): runs
`sap_bench SCENE --backend cpu --worlds W --steps N --stats-every 1 --threads 1 --json OUT`
with each binary for every scene x preset x lane count x extra option set, and compares the
JSON records without their timings, memory and host figures: solver statistics (Newton and
line-search iterations, contacts, statuses at every step), the fp64 retry counters, the failed
and non-finite worlds, the final state (max |qvel| to the last bit, worlds at rest, and the
final-state digest where both binaries write one) and, with emulated lanes, the barrier and
collective counts per kernel. Exit status 1 when any pair differs.

  tools/checks/compare_bench.py OLD/sap_bench NEW/sap_bench [--scenes S.json ...] [--presets approx32 ...]
                         [--lanes 0 32] [--variant "" "line_search_variant=exact_root" ...]
                         [--worlds 3] [--steps 60] [--jobs 2]

A variant is a space-separated list of key=value solver options (`--set`), "" for none.
Scenes default to every scenes/*.json.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Keys of a sap_bench run record that depend on the machine or the clock, not on the physics.
TIMING_KEYS = {"setup_s", "wall_s", "world_steps_per_s", "steps_per_s", "ms_per_step", "realtime_factor_per_world",
               "realtime_factor_aggregate", "host_rss_growth_mib", "stages_ms", "memory_per_world", "repeats"}
STATS_TIMING_KEYS = {"pass_wall_s"}
META_KEYS = {"device", "cpu_model", "cpu_hardware_threads", "threads", "date", "git", "host", "command",
             "build", "version", "scene_path", "generated"}


def physics_of(record):
    """The run records of a sap_bench JSON (single mode: the record itself; scaling mode: its
    records) without their timing and host figures."""
    runs = record["records"] if record.get("mode") == "scaling" else [record]
    out = []
    for r in runs:
        r = {k: v for k, v in r.items() if k not in TIMING_KEYS and k not in META_KEYS and k != "records"}
        if isinstance(r.get("stats"), dict):
            r["stats"] = {k: v for k, v in r["stats"].items() if k not in STATS_TIMING_KEYS}
        out.append(r)
    return out


def run(binary, scene, preset, lanes, variant, args, out):
    cmd = [binary, scene, "--backend", "cpu", "--worlds", str(args.worlds), "--steps", str(args.steps),
           "--warmup", "0", "--stats-every", "1", "--threads", "1", "--quiet", "--json", out]
    if preset:
        cmd += ["--preset", preset]
    if lanes:
        cmd += ["--emulated-lanes", str(lanes)]
    for kv in variant.split():
        cmd += ["--set", kv]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode not in (0, 3):  # 3: some world failed (part of what is compared)
        return None, "%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:])
    with open(out) as f:
        return json.load(f), None


def diff(a, b, path=""):
    """Paths where a and b differ (floats compared exactly)."""
    if type(a) != type(b):
        return [path or "/"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append("%s/%s (only in %s)" % (path, k, "old" if k in a else "new"))
            else:
                out += diff(a[k], b[k], "%s/%s" % (path, k))
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return ["%s (length %d vs %d)" % (path, len(a), len(b))]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, "%s/%d" % (path, i))
        return out
    return [] if a == b else ["%s: %r vs %r" % (path, a, b)]


def compare_one(job):
    old, new, scene, preset, lanes, variant, args = job
    with tempfile.TemporaryDirectory() as tmp:
        ra, ea = run(old, scene, preset, lanes, variant, args, os.path.join(tmp, "old.json"))
        rb, eb = run(new, scene, preset, lanes, variant, args, os.path.join(tmp, "new.json"))
    name = "%s %s lanes=%d %s" % (os.path.basename(scene), preset or "scene", lanes, variant or "-")
    if ea or eb:
        if ea and eb:  # both refuse the same input alike: not a difference
            return name, "both failed", []
        return name, "error", [ea or eb]
    a, b = physics_of(ra), physics_of(rb)
    # The final-state digest exists only in newer binaries: compare it only when both have it.
    for x, y in zip(a, b):
        fx, fy = x.get("final_state", {}), y.get("final_state", {})
        if ("digest" in fx) != ("digest" in fy):
            fx.pop("digest", None)
            fy.pop("digest", None)
    d = diff(a, b)
    return name, "identical" if not d else "DIFFERENT", d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--scenes", nargs="*", default=None)
    ap.add_argument("--presets", nargs="*", default=["approx32", "approx64", "drake"])
    ap.add_argument("--lanes", nargs="*", type=int, default=[0, 32])
    ap.add_argument("--variant", nargs="*", default=[""])
    ap.add_argument("--worlds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    scenes = args.scenes or sorted(glob.glob(os.path.join(ROOT, "scenes", "*.json")))
    jobs = [(os.path.abspath(args.old), os.path.abspath(args.new), s, p, l, v, args)
            for s in scenes for p in args.presets for l in args.lanes for v in args.variant]
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, verdict, details in pool.map(compare_one, jobs):
            print("%-70s %s" % (name, verdict), flush=True)
            for line in details[:10]:
                print("    " + line)
            bad += verdict not in ("identical", "both failed")
    print("%d of %d runs differ" % (bad, len(jobs)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
