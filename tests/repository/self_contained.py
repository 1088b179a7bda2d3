#!/usr/bin/env python3
"""The repository carries everything it runs on (ctest Repository.SelfContained).

1. No tracked file names the folder that once sat beside the checkout (the parent directory's
   "shared"): a clone has nothing beside it.
2. Every file a scene or a vendored model refers to (JSON scene assets, MJCF includes, mesh,
   heightfield and other asset files) exists and lies inside the repository.
3. Every folder of models/ carries its upstream LICENSE and a SOURCE.md note.

Run from anywhere: tests/repository/self_contained.py [REPO_ROOT]
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
FORBIDDEN = ".." + "/" + "shared"  # spelled in pieces so that this file does not name it
SKIP_DIRS = {".git", "node_modules", "__pycache__"}
errors = []


def tracked_files():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True).stdout
        return [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):  # a source tarball: walk it, builds excluded
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith(("build", ".venv"))]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
        return files


def inside(path):
    real = os.path.realpath(path)
    return real == ROOT or real.startswith(ROOT + os.sep)


def check_file_ref(source, ref, base):
    path = os.path.normpath(os.path.join(base, ref))
    if not inside(path):
        errors.append(f"{source}: '{ref}' lies outside the repository")
    elif not os.path.isfile(path):
        errors.append(f"{source}: '{ref}' does not exist")
    return path


def check_mjcf(path, seen):
    if path in seen:
        return
    seen.add(path)
    rel = os.path.relpath(path, ROOT)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        errors.append(f"{rel}: XML parse error: {e}")
        return
    base = os.path.dirname(path)
    comp = root.find("compiler")
    dirs = {k: (comp.get(k) if comp is not None and comp.get(k) else "") for k in ("meshdir", "texturedir", "assetdir")}
    for e in root.iter():
        f = e.get("file")
        if f is None:
            continue
        if e.tag == "include":
            check_mjcf(check_file_ref(rel, f, base), seen)
        else:
            sub = dirs["meshdir"] if e.tag in ("mesh", "hfield", "skin") else dirs["texturedir"]
            check_file_ref(rel, f, os.path.join(base, sub or dirs["assetdir"]))


def main():
    files = tracked_files()
    me = os.path.relpath(os.path.realpath(__file__), ROOT)
    for f in files:
        p = os.path.join(ROOT, f)
        if f == me or not os.path.isfile(p):
            continue
        with open(p, "rb") as fh:
            if FORBIDDEN.encode() in fh.read():
                errors.append(f"{f}: names {FORBIDDEN}, which a clone does not have")
    seen = set()
    scenes = sorted(f for f in files if f.startswith("scenes/"))
    for f in scenes:
        p = os.path.join(ROOT, f)
        if f.endswith(".json"):
            with open(p) as fh:
                scene = json.load(fh)
            for i, a in enumerate(scene.get("assets", [])):
                target = check_file_ref(f"{f}: /assets/{i}/path", a["path"], os.path.dirname(p))
                if a.get("type") == "mjcf" and os.path.isfile(target) and inside(target):
                    check_mjcf(target, seen)
        elif f.endswith(".xml"):
            check_mjcf(p, seen)
    models = os.path.join(ROOT, "models")
    for d in sorted(os.listdir(models)):
        full = os.path.join(models, d)
        if not os.path.isdir(full):
            continue
        for need in ("LICENSE", "SOURCE.md"):
            if not os.path.isfile(os.path.join(full, need)):
                errors.append(f"models/{d}: no {need}")
        for n in sorted(os.listdir(full)):
            if n.endswith(".xml"):
                check_mjcf(os.path.join(full, n), seen)
    for e in errors:
        print("self_contained:", e)
    print(f"self_contained: {len(files)} files, {len(scenes)} scene files, {len(seen)} MJCF files checked, "
          f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
