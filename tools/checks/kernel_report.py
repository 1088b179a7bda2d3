#!/usr/bin/env python3
"""Static report of the CUDA kernels, for tracking every kernel change without a GPU.

For each kernel of the CUDA build: registers per thread, stack frame, spill stores/loads and
static shared memory, from ptxas (the .cu files are recompiled with -Xptxas -v using the
build's own compile commands), and the resulting residency on an H100 (SM 9.0: 64K registers,
2048 threads, 32 blocks, 228 KB shared memory per SM) at the block size the launcher uses
(team kernels: CudaExec's team size times its worlds per block; flat kernels: 128 threads).
Then, from the emulated-team executor (sap_bench --emulated-lanes), per world-step and team
kernel for a scene (default: the humanoid): block barriers (__syncthreads), warp syncs
(__syncwarp: sync() of a one-warp team) and warp collectives (reductions, broadcasts, shuffles).

Then the one-lane sections: every `team.rank() == 0` (or `!= 0`) branch of src/kernels/, with
the function or kernel it sits in and its `// one-lane: <what>` note (a branch without a note
is listed as such): the work the other lanes of a team wait through. No tree pass is among
them (the tree passes run a depth level at a time over the lanes). And the global memory per
world of the scene's buffers (sap_bench's memory report, by buffer group).

  tools/checks/kernel_report.py [--build build] [--scene scenes/humanoid.json] [--worlds 2]
                         [--steps 100] [--lanes 32] [--worlds-per-block 2] [--skip-barriers]
                         [--markdown OUT]
"""
import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# H100 (compute capability 9.0) per-SM limits.
SM_REGS, SM_THREADS, SM_BLOCKS, SM_SMEM = 65536, 2048, 32, 228 * 1024
SMEM_RESERVED_PER_BLOCK = 1024
REG_ALLOC_UNIT = 256  # registers, allocated per warp
# CudaExec's defaults (cuda/launch_cuda.cuh): a team of 32 threads (one warp per world), 2 such
# worlds per block; parallel_for's block.
TEAM_THREADS, TEAM_WORLDS_PER_BLOCK, FLAT_THREADS = 32, 2, 128


def cu_commands(build):
    """The build's compile commands of its .cu files."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = [c for c in json.load(f) if c["file"].endswith(".cu")]
    if not commands:
        sys.exit("kernel_report: no .cu file in %s/compile_commands.json (configure with CUDA)" % build)
    return commands


def ptxas_usage(build):
    """Recompiles each cuda/*.cu of the build with -Xptxas -v; returns {mangled: usage}."""
    usage = {}
    for c in cu_commands(build):
        out = tempfile.NamedTemporaryFile(suffix=".o", delete=False).name
        clean = recompile_args(c, ["-Xptxas", "-v", "-o", out])  # compile only, with ptxas verbose
        p = subprocess.run(clean, cwd=c["directory"], capture_output=True, text=True)
        os.unlink(out)
        if p.returncode != 0:
            sys.exit("kernel_report: recompiling %s failed:\n%s" % (c["file"], p.stderr[-3000:]))
        current = None
        props_for = None
        for line in p.stderr.splitlines():
            m = re.search(r"Compiling entry function '(\S+)' for '(sm_\d+)'", line)
            if m:
                current = m.group(1)
                usage[current] = {"arch": m.group(2), "regs": 0, "stack": 0, "spill_st": 0, "spill_ld": 0,
                                  "smem": 0, "file": os.path.basename(c["file"])}
                continue
            # ptxas prints "Function properties for F" and then F's frame: the entry's own line,
            # then one per non-inlined callee (__noinline__ device functions). The entry's frame
            # covers its callees' frames only in part, so the callees' largest frame and all their
            # spills are added to the entry (an upper bound on the chain is the sum; we show the
            # entry's frame plus the largest callee's, and flag it).
            m = re.search(r"Function properties for (\S+)", line)
            if m:
                props_for = m.group(1)
                continue
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
            if m and current:
                st, sp_st, sp_ld = int(m.group(1)), int(m.group(2)), int(m.group(3))
                if props_for == current:
                    usage[current].update(stack=st, spill_st=sp_st, spill_ld=sp_ld)
                else:  # a non-inlined callee of the current entry
                    u = usage[current]
                    u["callee_stack"] = max(u.get("callee_stack", 0), st)
                    u["spill_st"] += sp_st
                    u["spill_ld"] += sp_ld
            m = re.search(r"Used (\d+) registers", line)
            if m and current:
                usage[current]["regs"] = int(m.group(1))
                s = re.search(r"(\d+) bytes smem", line)
                usage[current]["smem"] = int(s.group(1)) if s else 0
    return usage


def recompile_args(c, extra):
    """The build's compile command of c without its output and dependency-file arguments, plus extra."""
    args = shlex.split(c["command"]) if "command" in c else list(c["arguments"])
    clean, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MD", "-MMD") or a.startswith("-MF") or a.startswith("-MT"):
            skip = a in ("-o", "-MF", "-MT")
            continue
        clean.append(a)
    return clean + extra


def ptx_call_graph(ptx):
    """{function: set of callees} of a PTX module (.entry and .func bodies, `call` instructions;
    nvcc writes a call over several lines)."""
    heads = list(re.finditer(
        r"^[ \t]*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)", ptx, re.M))
    graph = {}
    for k, h in enumerate(heads):
        body = ptx[h.end():heads[k + 1].start() if k + 1 < len(heads) else len(ptx)]
        graph.setdefault(h.group(1), set()).update(
            m.group(1) for m in re.finditer(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([\w$.]+)", body))
    return graph


def recursive_functions(build):
    """Device functions on a call cycle (a function calling itself, directly or not), per .cu file of
    the build. ptxas leaves such a call's frames out of the kernel's cumulative stack size and does
    not warn; the driver then reserves too little stack and the kernel overflows it on the GPU (GJK's
    simplex_closest did, bench/results/2026-11-26_gpu_h100.md)."""
    found = []
    for c in cu_commands(build):
        out = tempfile.NamedTemporaryFile(suffix=".ptx", delete=False).name
        args = [a for a in recompile_args(c, ["-ptx", "-o", out]) if a != "-c"]
        p = subprocess.run(args, cwd=c["directory"], capture_output=True, text=True)
        if p.returncode != 0:
            os.unlink(out)
            sys.exit("kernel_report: PTX of %s failed:\n%s" % (c["file"], p.stderr[-3000:]))
        with open(out) as f:
            graph = ptx_call_graph(f.read())
        os.unlink(out)
        for fn in sorted(graph):  # on a cycle: fn reachable from one of its callees
            seen, todo = set(), list(graph[fn])
            while todo:
                g = todo.pop()
                if g in seen:
                    continue
                seen.add(g)
                todo.extend(graph.get(g, ()))
            if fn in seen:
                found.append((os.path.basename(c["file"]), fn))
    return found


def demangle(names):
    p = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return p.stdout.splitlines() if p.returncode == 0 else names


def short_name(d):
    """team_kernel_warp<sap::SapSolveKernel<double> > -> (SapSolveKernel<double>, warp): one-warp
    teams; team_kernel<...> -> (..., team): a block per world (team size 64, 96, ...)."""
    d = d.replace("(anonymous namespace)::", "")
    m = re.match(r"void sap::(team_kernel_warp|team_kernel|parallel_for_kernel)<sap::(.*)>\(.*", d)
    if m:
        inner = m.group(2).strip()
        return inner, {"team_kernel_warp": "warp", "team_kernel": "team"}.get(m.group(1), "flat")
    return re.sub(r"\(.*", "", d.replace("void ", "").replace("sap::", "")), "other"


def residency(regs, smem, threads):
    warps = math.ceil(threads / 32)
    regs_per_warp = math.ceil(max(regs, 1) * 32 / REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    blocks_regs = (SM_REGS // regs_per_warp) // warps
    blocks_threads = SM_THREADS // threads
    blocks_smem = SM_SMEM // (smem + SMEM_RESERVED_PER_BLOCK)
    blocks = min(blocks_regs, blocks_threads, blocks_smem, SM_BLOCKS)
    limiter = {blocks_regs: "registers", blocks_threads: "threads", blocks_smem: "shared memory"}.get(blocks, "blocks")
    return blocks, blocks * warps, limiter


def barrier_counts(build, scene, worlds, steps, lanes):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    cmd = [os.path.join(build, "sap_bench"), scene, "--backend", "cpu", "--worlds", str(worlds), "--steps", str(steps),
           "--warmup", "0", "--stats-every", "0", "--emulated-lanes", str(lanes), "--json", path, "--quiet"]
    subprocess.run(cmd, check=True)
    with open(path) as f:
        j = json.load(f)
    os.unlink(path)
    return cmd, j["runs"][0]["emulation"] if "runs" in j else j["emulation"]


def one_lane_sections():
    """[(file:line, enclosing function or kernel, note)] for every rank-0-only branch of src/kernels."""
    kdir = os.path.join(ROOT, "src", "kernels")
    rows = []
    for fname in sorted(os.listdir(kdir)):
        if not fname.endswith(".hpp"):
            continue
        with open(os.path.join(kdir, fname)) as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            if not re.search(r"rank\(\)\s*(==|!=)\s*0", line):
                continue
            where = "?"
            for k in range(i, -1, -1):
                # a member defined out of its class (kernels/limit_pd_rows.hpp: Kernel<S>::name)
                mo = re.match(r"^(?:inline\s+)?SAP_HDI?\s+.*?\b(\w+)<[\w,\s]*>::(\w+)\(", lines[k])
                if mo:
                    where = "%s::%s" % (mo.group(1), mo.group(2))
                    break
                m = (re.match(r"^(?:struct|class)\s+(\w+)", lines[k]) or
                     re.match(r"^\s*SAP_HDI?\s+[\w:<>,\s\*&]*?\b(\w+)\(", lines[k]))
                if m:
                    where = m.group(1) + ("()" if m.group(1) == "operator" else "")
                    # a member function: name its kernel too
                    if lines[k].startswith(" "):
                        for q in range(k, -1, -1):
                            mk = re.match(r"^(?:struct|class)\s+(\w+)", lines[q])
                            if mk:
                                where = "%s::%s" % (mk.group(1), where)
                                break
                    break
            note = re.search(r"//\s*one-lane:\s*(.*)", line)
            rows.append(("%s:%d" % (fname, i + 1), where, note.group(1).strip() if note else "(no one-lane note)"))
    return rows


def memory_report(build, scene):
    """sap_bench's per-world memory lines for a scene (one small CPU run)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    cmd = [os.path.join(build, "sap_bench"), scene, "--backend", "cpu", "--worlds", "2", "--steps", "1",
           "--warmup", "0", "--stats-every", "0", "--json", path, "--quiet"]
    subprocess.run(cmd, check=True)
    with open(path) as f:
        j = json.load(f)
    os.unlink(path)
    run = j["runs"][0] if "runs" in j else j
    return run.get("memory_per_world")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--scene", default=os.path.join(ROOT, "scenes", "humanoid.json"))
    ap.add_argument("--worlds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--lanes", type=int, default=TEAM_THREADS, help="team size (threads per world)")
    ap.add_argument("--worlds-per-block", type=int, default=TEAM_WORLDS_PER_BLOCK,
                    help="one-warp teams per block (team size 32 only)")
    ap.add_argument("--skip-barriers", action="store_true", help="only the ptxas table")
    ap.add_argument("--markdown", help="also write the tables to this file")
    ap.add_argument("--memory-scenes", nargs="*", default=[os.path.join(ROOT, "scenes", n) for n in (
        "humanoid.json", "box_stack_5.json", "franka_cube.json", "sphere_pile.json")],
        help="scenes for the global-memory-per-world table")
    a = ap.parse_args()

    usage = ptxas_usage(a.build)
    names = list(usage)
    # Dynamic shared memory per world of the stages that keep their working set on chip (the
    # free-motion scratch and factor, the fused Newton system and rows), for the report's scene.
    on_chip = (memory_report(a.build, a.scene) or {}).get("on_chip_bytes", {})

    def dynamic_smem(name):
        if "FreeMotionKernel" in name:
            return on_chip.get("free_motion", 0)
        if "SapSolveKernel" in name and "Newton" not in name:
            return on_chip.get("newton", 0)
        return 0
    rows = []
    for mangled, d in zip(names, demangle(names)):
        name, kind = short_name(d)
        # The launcher instantiates both team forms; report the one this team size runs.
        if (kind == "warp" and a.lanes != 32) or (kind == "team" and a.lanes == 32):
            continue
        u = usage[mangled]
        per_block = a.worlds_per_block if kind == "warp" else 1
        threads = a.lanes * per_block if kind in ("warp", "team") else FLAT_THREADS
        dyn = dynamic_smem(name)
        blocks, warps, limiter = residency(u["regs"], u["smem"] + dyn * per_block, threads)
        worlds = blocks * per_block if kind in ("warp", "team") else None
        rows.append((kind, name, u, threads, blocks, warps, worlds, limiter, dyn))
    rows.sort(key=lambda r: (r[0] not in ("warp", "team"), r[1]))
    out = ["| kernel | launch | regs/thread | stack B (own + largest non-inlined callee) | spill st/ld B (with callees) "
           "| smem B | on-chip B/world (%s) | block | blocks/SM | warps/SM (of 64) | team worlds/SM | limited by |"
           % os.path.basename(a.scene),
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for kind, name, u, threads, blocks, warps, worlds, limiter, dyn in rows:
        stack = "%d" % u["stack"] if not u.get("callee_stack") else "%d + %d" % (u["stack"], u["callee_stack"])
        out.append("| `%s` | %s | %d | %s | %d/%d | %d | %s | %d | %d | %d | %s | %s |" % (
            name, kind, u["regs"], stack, u["spill_st"], u["spill_ld"], u["smem"], dyn or "-", threads, blocks, warps,
            "-" if worlds is None else str(worlds), limiter))
    text = "Kernel resources (ptxas -v, %s) and H100 residency:\n\n" % (rows[0][2]["arch"] if rows else "?")
    text += "\n".join(out) + "\n"
    recursive = recursive_functions(a.build)
    text += ("\nRecursive device functions (from each .cu file's PTX call graph; ptxas leaves their frames "
             "out of the cumulative stack size, so the GPU overflows the stack it reserves): %s\n" % (
                 "none" if not recursive else ", ".join("`%s` (%s)" % (n, f) for f, n in recursive)))
    if recursive:
        print("kernel_report: WARNING: recursive device functions: %s" % recursive, file=sys.stderr)
    if not a.skip_barriers:
        cmd, emu = barrier_counts(a.build, a.scene, a.worlds, a.steps, a.lanes)
        text += ("\nPer world-step (emulated teams of %d lanes; `%s`): block barriers (__syncthreads), "
                 "warp syncs (__syncwarp) and warp collectives (reduce/broadcast/shuffle calls):\n\n") % (
            a.lanes, " ".join(os.path.relpath(c, ROOT) if os.path.isabs(c) else c for c in cmd[:-3]))
        text += ("| team kernel | block barriers | warp syncs | warp collectives | max block barriers in one world-launch "
                 "| max warp syncs in one world-launch |\n|---|---|---|---|---|---|\n")
        tb = tw = tc = 0.0
        for k in emu:
            if not k["team"]:
                continue
            b, w, c = (k["block_barriers_per_world_step"], k.get("warp_syncs_per_world_step", 0.0),
                       k.get("warp_collectives_per_world_step", 0.0))
            tb, tw, tc = tb + b, tw + w, tc + c
            text += "| `%s` | %.1f | %.1f | %.1f | %d | %d |\n" % (
                k["kernel"].replace("sap::", ""), b, w, c, k["max_block_barriers_per_world_launch"],
                k.get("max_warp_syncs_per_world_launch", 0))
        text += "| total | %.1f | %.1f | %.1f | | |\n" % (tb, tw, tc)
    text += ("\nOne-lane sections (`team.rank() == 0` branches of src/kernels/; the other lanes of the "
             "world's team wait at the next sync):\n\n| where | function / kernel | work |\n|---|---|---|\n")
    for where, fn, note in one_lane_sections():
        text += "| %s | `%s` | %s |\n" % (where, fn, note)
    if a.memory_scenes:
        text += ("\nGlobal memory per world (bytes of every live buffer, 2 worlds minus 1: the solver's workspace, "
                 "its constraint and Newton buffers, and the rest: state, controls, contacts, collision; "
                 "`sap_bench SCENE --worlds 2 --steps 1`):\n\n")
        header = None
        for scene in a.memory_scenes:
            mem = memory_report(a.build, scene)
            if not mem:
                text += "| %s | (no memory report) |\n" % os.path.basename(scene)
                continue
            order = ["total_bytes", "solver_workspace_bytes", "constraint_buffers_bytes", "other_bytes",
                     "largest_array", "largest_array_bytes"]
            keys = [k for k in order if k in mem] + sorted(k for k in mem if k not in order)
            if header is None:
                header = keys
                text += "| scene | " + " | ".join(header) + " |\n|---|" + "---|" * len(header) + "\n"
            text += "| %s | " % os.path.basename(scene) + " | ".join(str(mem.get(k, "")) for k in header) + " |\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
