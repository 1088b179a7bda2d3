#!/usr/bin/env python3
"""Our CPU throughput against MuJoCo's `mujoco-testspeed` on the same MJCF model, same dt, same
machine, in one run (issue 6). Prints a Markdown table and writes a JSON record.

    tools/reference/compare_mujoco.py [--model models/mujoco_humanoid/humanoid.xml] [--steps 10000]
                            [--threads 1,2] [--worlds 64] [--build build] [--json OUT]

MuJoCo: `mujoco-testspeed MODEL NSTEP NTHREAD CTRLNOISE` (Debian package libmujoco-samples) runs
NTHREAD independent simulations of NSTEP steps with random control noise and reports steps per
second over all threads. Ours: `sap_bench MODEL --worlds W --threads T` (approx32 preset, the
model's own dt, zero controls), world-steps per second. Both simulate the same model at the same
dt; the physics differ (MuJoCo's soft constraints vs SAP, their contact sets), so contacts per
step are reported next to the throughput.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run_mujoco(model, steps, threads):
    exe = shutil.which("mujoco-testspeed")
    if exe is None:
        sys.exit("compare_mujoco: mujoco-testspeed not found (apt-get install libmujoco-samples)")
    out = subprocess.run([exe, model, str(steps), str(threads), "0.01"], capture_output=True, text=True, check=True).stdout
    def grab(label):
        m = re.search(label + r"\s*:\s*([0-9.eE+-]+)", out)
        if not m:
            sys.exit("compare_mujoco: could not read '%s' from mujoco-testspeed output:\n%s" % (label, out))
        return float(m.group(1))
    dt = re.search(r"at dt = ([0-9.eE+-]+)", out)
    # With several threads testspeed prints a total first ("Total steps per second"), then per thread.
    total = re.search(r"Total steps per second\s*:\s*([0-9.eE+-]+)", out)
    steps_per_s = float(total.group(1)) if total else grab("Steps per second")
    return {"steps_per_s": steps_per_s, "contacts_per_step": grab("Contacts per step"),
            "dof": grab("Degrees of freedom"), "dt": float(dt.group(1)) if dt else None}


def run_ours(build, model, worlds, threads, steps):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        # No --drop-unsupported: the humanoid's tendons (and the Panda's coupler) are imported, so
        # both simulators step the same model.
        cmd = [os.path.join(build, "sap_bench"), model, "--backend", "cpu", "--worlds", str(worlds),
               "--threads", str(threads), "--steps", str(steps), "--min-time", "2", "--json", out, "--quiet"]
        subprocess.run(cmd, check=True)
        with open(out) as f:
            r = json.load(f)
    return {"world_steps_per_s": r["world_steps_per_s"], "contacts_per_world": r["stats"]["contacts_per_world"]["mean"],
            "dt": r["dt"], "command": " ".join(cmd[:-3])}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=os.path.join(root, "models", "mujoco_humanoid", "humanoid.xml"))
    p.add_argument("--steps", type=int, default=10000, help="MuJoCo steps per thread")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--worlds", type=int, default=64, help="our worlds per run")
    p.add_argument("--build", default=os.path.join(root, "build"))
    p.add_argument("--json", default=None)
    a = p.parse_args()
    if not os.path.exists(a.model):
        sys.exit("compare_mujoco: model %s not found" % a.model)
    rows = []
    for t in [int(x) for x in a.threads.split(",")]:
        mj = run_mujoco(a.model, a.steps, t)
        ours = run_ours(a.build, a.model, a.worlds, t, 200)
        rows.append({"threads": t, "mujoco": mj, "ours": ours, "ratio": ours["world_steps_per_s"] / mj["steps_per_s"]})
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print("| threads | MuJoCo steps/s | contacts/step | ours world-steps/s (%d worlds) | contacts/world | ratio ours/MuJoCo |" % a.worlds)
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %.0f | %.1f | %.0f | %.1f | %.2f |" % (r["threads"], r["mujoco"]["steps_per_s"], r["mujoco"]["contacts_per_step"],
                                                     r["ours"]["world_steps_per_s"], r["ours"]["contacts_per_world"], r["ratio"]))
    print("model %s, dt MuJoCo %s / ours %s, CPU %s" % (os.path.basename(a.model), rows[0]["mujoco"]["dt"], rows[0]["ours"]["dt"], cpu))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "cpu": cpu, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
