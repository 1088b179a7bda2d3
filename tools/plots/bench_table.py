#!/usr/bin/env python3
"""Markdown table of sap_bench single-run JSON records (one row per file), as used in
docs/benchmarks.md. Standard library only.

    python3 tools/plots/bench_table.py bench/results/cpu/*.json
"""
import json
import sys


def fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}"


def main():
    paths = sys.argv[1:]
    if not paths or paths[0] in ("-h", "--help"):
        sys.exit(__doc__)
    print("| scene | nworld | steps x repeats | world-steps/s | ms/step | RTF/world | RTF aggr. | collide | free motion "
          "| contact setup | solve | integrate | Newton mean / p95 / max | line search mean / max "
          "| contacts/world mean / max | truncated | failed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|")
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if d.get("tool") != "sap_bench" or d.get("mode") != "single":
            print(f"{p}: not a sap_bench single-run record, skipped", file=sys.stderr)
            continue
        st = d.get("stages_ms") or {}
        s = d.get("stats") or {}
        nw = s.get("newton_iterations", {})
        ls = s.get("line_search_iterations", {})
        c = s.get("contacts_per_world", {})
        name = d.get("scene_file", d["scene"]).rsplit("/", 1)[-1].rsplit(".", 1)[0]
        row = [name, d["nworld"], f'{d["steps"]} x {d.get("repeats", 1)}', fmt(d["world_steps_per_s"], 4), fmt(d["ms_per_step"]),
               fmt(d["realtime_factor_per_world"]), fmt(d["realtime_factor_aggregate"]),
               fmt(st.get("collide")), fmt(st.get("free_motion")), fmt(st.get("contact_setup")),
               fmt(st.get("solve")), fmt(st.get("integrate")),
               f'{fmt(nw.get("mean"))} / {fmt(nw.get("p95"))} / {fmt(nw.get("max"))}' if nw else "-",
               f'{fmt(ls.get("mean"))} / {fmt(ls.get("max"))}' if ls else "-",
               f'{fmt(c.get("mean"))} / {fmt(c.get("max"))}' if c else "-",
               s.get("truncated_contacts_total", "-"), d["failed_worlds"]]
        print("| " + " | ".join(str(x) for x in row) + " |")


if __name__ == "__main__":
    main()
