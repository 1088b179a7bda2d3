#!/usr/bin/env python3
"""Which MuJoCo model features public models use (issue 30): a survey table.

For each model file, MuJoCo's Python package compiles it and the compiled model says which
dynamics it uses beyond what every model has: spatial tendons (site paths, sphere/cylinder
wrapping, sidesites, pulleys), fixed tendons, tendon limits / springs / damping / frictionloss /
armature, equality types, actuator dynamics (dyntype), gains and biases (muscle, affine),
transmissions, activation limits, fluid forces (inertia-box or ellipsoid model, density,
viscosity, wind), gravity compensation, actuator force ranges on joints, dry friction, spring
references; the XML says what the compiler folds away (`springdamper`). With --bench, our
loader's strict error (the first unsupported element) and the list of elements that
--drop-unsupported drops are added per model.

Models: the top-level MJCF files of dm_control's suite (PyPI dm_control) with --dm-control,
gymnasium-robotics' swimmer and coupled_half_cheetah with --gym, or files given on the command
line. Files that compile to a model without degrees of freedom (dm_control's lqr.xml, a template
that its Python fills in) are listed as such.

  python tools/checks/mujoco_feature_survey.py --dm-control --gym [--bench build-cpu/sap_bench] [--out FILE]

Needs `mujoco` (and `dm_control` / `gymnasium_robotics` for the model groups) in the running
Python, e.g. a venv: python3 -m venv V && V/bin/pip install mujoco dm_control gymnasium-robotics.
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import json
from pathlib import Path

import mujoco
import numpy as np

WRAP = mujoco.mjtWrap
DYN = {int(mujoco.mjtDyn.mjDYN_NONE): "none", int(mujoco.mjtDyn.mjDYN_INTEGRATOR): "integrator",
       int(mujoco.mjtDyn.mjDYN_FILTER): "filter", int(mujoco.mjtDyn.mjDYN_FILTEREXACT): "filterexact",
       int(mujoco.mjtDyn.mjDYN_MUSCLE): "muscle", int(mujoco.mjtDyn.mjDYN_USER): "user"}
GAIN = {int(mujoco.mjtGain.mjGAIN_FIXED): "fixed", int(mujoco.mjtGain.mjGAIN_AFFINE): "affine",
        int(mujoco.mjtGain.mjGAIN_MUSCLE): "muscle", int(mujoco.mjtGain.mjGAIN_USER): "user"}
BIAS = {int(mujoco.mjtBias.mjBIAS_NONE): "none", int(mujoco.mjtBias.mjBIAS_AFFINE): "affine",
        int(mujoco.mjtBias.mjBIAS_MUSCLE): "muscle", int(mujoco.mjtBias.mjBIAS_USER): "user"}
TRN = {int(v): k.replace("mjTRN_", "").lower() for k, v in mujoco.mjtTrn.__members__.items() if k != "mjTRN_UNDEFINED"}
EQ = {int(v): k.replace("mjEQ_", "").lower() for k, v in mujoco.mjtEq.__members__.items()}


def package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"mujoco_feature_survey: python package '{name}' is not installed in {sys.executable}")
    return Path(list(spec.submodule_search_locations)[0])


def dm_control_models():
    return sorted((package_dir("dm_control") / "suite").glob("*.xml"))


def gym_models():
    root = package_dir("gymnasium_robotics") / "envs"
    return [root / "mujoco/assets/swimmer.xml", root / "multiagent_mujoco/assets/coupled_half_cheetah.xml"]


def features(path):
    """Feature name -> count (or description) for one compiled model."""
    m = mujoco.MjModel.from_xml_path(str(path))
    f = {}

    def add(name, n=1):
        if n:
            f[name] = f.get(name, 0) + int(n)

    xml = Path(path).read_text(errors="ignore")
    for t in range(m.ntendon):
        adr, num = m.tendon_adr[t], m.tendon_num[t]
        types = [int(x) for x in m.wrap_type[adr:adr + num]]
        if types[0] == WRAP.mjWRAP_JOINT:
            add("fixed tendon")
        else:
            add("spatial tendon")
            add("wrap sphere", sum(x == WRAP.mjWRAP_SPHERE for x in types))
            add("wrap cylinder", sum(x == WRAP.mjWRAP_CYLINDER for x in types))
            add("pulley", sum(x == WRAP.mjWRAP_PULLEY for x in types))
            add("sidesite", sum(x in (WRAP.mjWRAP_SPHERE, WRAP.mjWRAP_CYLINDER) and m.wrap_prm[adr + k] >= 0
                                for k, x in enumerate(types)))
        add("tendon limited", m.tendon_limited[t])
        add("tendon frictionloss", m.tendon_frictionloss[t] > 0)
        add("tendon armature", m.tendon_armature[t] > 0)
        add("tendon stiffness", m.tendon_stiffness[t] > 0)
        add("tendon damping", m.tendon_damping[t] > 0)
        add("tendon actuatorfrcrange", m.tendon_actfrclimited[t])
    for e in range(m.neq):
        add("equality " + EQ[int(m.eq_type[e])])
    for u in range(m.nu):
        dyn = DYN.get(int(m.actuator_dyntype[u]), "?")
        if dyn != "none":
            add("dyntype " + dyn)
        gain, bias = GAIN.get(int(m.actuator_gaintype[u]), "?"), BIAS.get(int(m.actuator_biastype[u]), "?")
        if gain != "fixed":
            add("gain " + gain)
        if bias == "muscle":
            add("bias muscle")
        elif bias == "affine" and m.actuator_biasprm[u, 0] != 0:
            add("affine bias offset")
        add("actlimited", m.actuator_actlimited[u])
        add("actearly", m.actuator_actearly[u])
        trn = TRN.get(int(m.actuator_trntype[u]), "?")
        if trn != "joint":
            add("transmission " + trn)
    if m.opt.density > 0:
        add("fluid density")
    if m.opt.viscosity > 0:
        add("fluid viscosity")
    if np.any(m.opt.wind != 0):
        add("fluid wind")
    if m.opt.density > 0 or m.opt.viscosity > 0:
        ell = int(np.sum(m.geom_fluid[:, 0] > 0))
        add("fluid ellipsoid geoms", ell)
        if ell == 0:
            add("fluid inertia-box bodies", int(np.sum(m.body_mass[1:] > mujoco.mjMINVAL)))
    add("gravcomp bodies", int(np.sum(m.body_gravcomp > 0)))
    add("actuatorfrcrange joints", int(np.sum(m.jnt_actfrclimited)))
    add("dof frictionloss", int(np.sum(m.dof_frictionloss > 0)))
    add("springdamper (xml)", len(re.findall(r"\bspringdamper\s*=", xml)))
    add("springref != ref", int(np.sum(np.abs(m.qpos_spring - m.qpos0) > 1e-12)))
    add("joint stiffness", int(np.sum(m.jnt_stiffness > 0)))
    add("ball joints", int(np.sum(m.jnt_type == mujoco.mjtJoint.mjJNT_BALL)))
    add("condim != 3 geoms", int(np.sum(m.geom_condim != 3)))
    add("hfield geoms", int(np.sum(m.geom_type == mujoco.mjtGeom.mjGEOM_HFIELD)))
    add("mesh geoms", int(np.sum(m.geom_type == mujoco.mjtGeom.mjGEOM_MESH)))
    return m, f


def bench_load(bench, path):
    """(strict error or '', dropped element notes) from our loader via sap_bench."""
    def run(extra):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            cmd = [str(bench), str(path), "--steps", "1", "--warmup", "0", "--worlds", "1", "--backend", "cpu",
                   "--threads", "1", "--json", str(out), "--quiet"] + extra
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if not out.exists():
                err = " ".join(r.stderr.split()) or f"exit {r.returncode}"
                err = re.sub(r"^.*?sap_bench: (error: )?", "", err).replace(str(path), Path(path).name)
                return err.replace(" (ImportOptions::drop_unsupported drops it with a warning)", ""), []
            j = json.loads(out.read_text())
            drops = []
            for w in j.get("warnings", []):
                m = re.match(r"^.*?:\d+: (.*?) dropped", w)
                if m:
                    n = re.search(r"\((\d+) occurrences\)", w)
                    drops.append(m.group(1) + (f" x{n.group(1)}" if n else ""))
            return "", drops
    err, _ = run([])
    drops = []
    if err:
        _, drops = run(["--drop-unsupported"])
    return err, drops


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--dm-control", action="store_true", help="dm_control's suite models")
    ap.add_argument("--gym", action="store_true", help="gymnasium-robotics' swimmer and coupled_half_cheetah")
    ap.add_argument("--bench", help="sap_bench binary: add our loader's strict error and drops")
    ap.add_argument("--out", help="write the markdown table here (default: stdout)")
    a = ap.parse_args()
    paths = [Path(p) for p in a.models]
    if a.dm_control:
        paths += dm_control_models()
    if a.gym:
        paths += gym_models()
    lines = [f"MuJoCo {mujoco.__version__}; features of the compiled models (counts).", "",
             "| model | nv | nu | features | our strict load |" if a.bench else "| model | nv | nu | features |",
             "|---|---|---|---|---|" if a.bench else "|---|---|---|---|"]
    for p in paths:
        name = str(p)
        for pkg in ("gymnasium_robotics", "dm_control"):
            if pkg in p.parts:
                name = "/".join(p.parts[p.parts.index(pkg):])
        try:
            m, f = features(p)
        except Exception as e:  # a file MuJoCo itself rejects
            lines.append(f"| {name} | | | MuJoCo error: {str(e).splitlines()[0]} |" + (" |" if a.bench else ""))
            continue
        desc = ", ".join(f"{k} {v}" for k, v in f.items()) or "(none beyond joints, geoms, motors)"
        if m.nv == 0:
            desc = "no degrees of freedom (a template); " + desc
        row = f"| {name} | {m.nv} | {m.nu} | {desc} |"
        if a.bench:
            err, drops = bench_load(a.bench, p)
            row += " strict |" if not err else f" {err[:160]}; drops: {', '.join(drops) or '-'} |"
        lines.append(row)
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
