#!/usr/bin/env python3
"""Where a CUDA kernel spends its time, by source line: Nsight Compute's per-instruction samples
joined with the line table of the kernel's machine code.

Inputs (tools/run/gpu_profile.sh makes both on the lent GPU):
  SASS_CSV   `ncu -i REPORT --page source --csv --print-source sass`: one row per instruction of
             the profiled kernel, in address order, with its warp-stall samples, instructions
             executed (per warp) and thread instructions executed
  DISASM     `nvdisasm --print-line-info-inline` of the kernel's function (a build with
             -lineinfo): the same instructions in the same order, each after `//## File "F",
             line L [inlined at ...]` lines, the innermost first

Prints, largest first, the share of the stall samples and of the instructions of each innermost
source line (with its threads per instruction: 32 is a full warp, 1.0 a lane running alone), and
the same per line of a chosen file (--frame, default kernels/newton.hpp: the phase of the Newton
loop that inlined the line). --json writes the tables.

  tools/checks/gpu_source_profile.py SASS_CSV DISASM [--top 40] [--frame src/kernels/newton.hpp] [--json OUT]
"""
import argparse
import collections
import csv
import json
import re
import sys

LINE = re.compile(r'\s*//## File "([^"]+)", line (\d+)')
INST = re.compile(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*)')


def short(path):
    """The path below the repository (the line table holds the build's absolute, ../ paths)."""
    return path.split("/../")[-1]


def instructions(disasm_lines):
    """(offset, chain) per instruction: chain = the source frames of its //## block, innermost first
    (an instruction without a block of its own keeps the previous one's)."""
    out, chain, block = [], [], []
    for ln in disasm_lines:
        m = LINE.match(ln)
        if m:
            block.append(f"{short(m.group(1))}:{m.group(2)}")
            continue
        m = INST.match(ln)
        if m:
            if block:
                chain, block = block, []
            out.append((int(m.group(1), 16), chain))
    return out


def number(text):
    try:
        return float(text)
    except ValueError:
        return 0.0


def profile(sass_csv_rows, disasm_lines, frame_file):
    header_at = next(k for k, r in enumerate(sass_csv_rows) if r and r[0] == "Address")
    header, data = sass_csv_rows[header_at], [r for r in sass_csv_rows[header_at + 1:] if r and r[0].startswith("0x")]
    col = {h: k for k, h in enumerate(header)}
    base = int(data[0][0], 16)
    by_offset = {int(r[0], 16) - base: r for r in data}
    insts = instructions(disasm_lines)
    if len(insts) != len(data):
        sys.exit(f"gpu_source_profile: {len(insts)} instructions in the disassembly, {len(data)} in the samples: "
                 "not the profiled kernel's function (another launcher form or template instance?) or another build")
    sampled, executed, threads = (col["Warp Stall Sampling (All Samples)"], col["Instructions Executed"],
                                  col["Thread Instructions Executed"])
    inner = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    framed = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    total = [0.0, 0.0]
    unmatched = 0
    for offset, chain in insts:
        row = by_offset.get(offset)
        if row is None:
            unmatched += 1
            continue
        s, i, t = number(row[sampled]), number(row[executed]), number(row[threads])
        total[0] += s
        total[1] += i
        key = chain[0] if chain else "(no line)"
        frame = next((f for f in chain if f.startswith(frame_file + ":")), key)
        for table, k in ((inner, key), (framed, frame)):
            table[k][0] += s
            table[k][1] += i
            table[k][2] += t

    def rows(table):
        out = []
        for k, (s, i, t) in sorted(table.items(), key=lambda e: -e[1][0]):
            out.append({"line": k, "samples_pct": 100 * s / max(total[0], 1), "instructions_pct": 100 * i / max(total[1], 1),
                        "threads_per_instruction": t / i if i else 0.0})
        return out

    return {"instructions": len(insts), "samples": total[0], "warp_instructions": total[1], "unmatched": unmatched,
            "by_line": rows(inner), "by_frame": rows(framed), "frame_file": frame_file}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sass_csv")
    ap.add_argument("disasm")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--frame", default="src/kernels/newton.hpp")
    ap.add_argument("--json")
    a = ap.parse_args()
    with open(a.sass_csv, newline="") as f:
        rows = list(csv.reader(f))
    with open(a.disasm) as f:
        disasm = f.read().splitlines()
    p = profile(rows, disasm, a.frame)
    print(f"{p['instructions']} instructions, {p['samples']:.0f} stall samples, {p['warp_instructions']:.4g} warp "
          f"instructions executed ({p['unmatched']} unmatched)")
    for title, key in (("innermost source line", "by_line"), (f"line of {a.frame} (the frame that inlined it)", "by_frame")):
        print(f"\n  samples  instructions  threads/inst  {title}")
        for r in p[key][:a.top]:
            print(f"  {r['samples_pct']:6.1f}%  {r['instructions_pct']:11.1f}%  {r['threads_per_instruction']:12.1f}  {r['line']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(p, f, indent=1)


if __name__ == "__main__":
    main()
