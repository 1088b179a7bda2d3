#!/usr/bin/python3
"""Plot a sap_ablate run: velocity and position differences between solver variants versus
simulated time (mean over worlds solid, max over worlds dashed), log scale.

    build/sap_ablate scenes/box_stack_5.json --json bench/results/ablation.json
    /usr/bin/python3 tools/plots/plot_ablation.py bench/results/ablation.json --out bench/results/ablation.png

Exact zeros (identical results) cannot be drawn on a log axis: they are shown at --floor and the
legend says so. Needs matplotlib: the Debian package python3-matplotlib installs it for
/usr/bin/python3 (run the script with that interpreter if the python3 on your PATH lacks it),
or `pip install matplotlib`.
"""
import argparse
import json
import math
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="JSON written by sap_ablate --json")
    ap.add_argument("--out", default="ablation.png", help="output PNG (default ablation.png)")
    ap.add_argument("--floor", type=float, default=1e-17, help="value drawn for exact zeros (default 1e-17)")
    ap.add_argument("--no-max", action="store_true", help="draw only the mean over worlds")
    ap.add_argument("--dpi", type=int, default=90, help="resolution (default 90, keeps the PNG small)")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("matplotlib is missing for " + sys.executable +
                 ": run this script with /usr/bin/python3 (python3-matplotlib) or pip install matplotlib")
    with open(args.json) as f:
        d = json.load(f)
    if d.get("tool") != "sap_ablate":
        sys.exit(f"{args.json}: not a sap_ablate record")

    t = d["time"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.4), sharex=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, c in enumerate(d["comparisons"]):
        col = colors[i % len(colors)]
        label = f'{c["a"]} - {c["b"]}' if c["name"] == c["a"] else f'{c["name"]}: {c["a"]} - {c["b"]}'
        if len(label) > 60:
            label = label[:57] + "..."
        for ax, key in ((ax1, "dv"), (ax2, "dq")):
            for stat, style in (("mean", "-"), ("max", "--")):
                if stat == "max" and (args.no_max or d["nworld"] == 1):
                    continue
                ys = c[f"{key}_{stat}"]
                nonfinite = sum(1 for y in ys if y is None or not math.isfinite(y))
                if nonfinite:
                    print(f'{c["name"]} {key}_{stat}: {nonfinite} non-finite steps (not drawn)', file=sys.stderr)
                ys = [max(y, args.floor) if y is not None and math.isfinite(y) else float("nan") for y in ys]
                ax.plot(t, ys, style, color=col, lw=1, label=label if (ax is ax1 and stat == "mean") else None)
    mode = d["mode"] + (f' (shared state: {d["reference"]})' if d["mode"] == "one-step" else "")
    ax1.set_ylabel("||v(a) - v(b)||  (generalized velocity)")
    ax2.set_ylabel("||q(a) - q(b)||  (generalized position)")
    for ax in (ax1, ax2):
        ax.set_yscale("log")
        ax.set_xlabel("simulated time (s)")
        ax.grid(True, which="both", alpha=0.3)
    ncomp = len(d["comparisons"])
    fig.legend(loc="lower center", ncol=min(ncomp, 3), fontsize=7, frameon=False,
               title=(f"solid: mean over {d['nworld']} worlds; dashed: max over worlds" if d["nworld"] > 1 and not args.no_max
                      else f"{d['nworld']} world(s), mean over worlds") + f"; exact zeros drawn at {args.floor:g}",
               title_fontsize=7)
    fig.suptitle(f'sap_ablate {d["scene"]}: {mode}, dt {d["dt"]:g} s, {d["device"]}', fontsize=10)
    fig.tight_layout(rect=(0, 0.05 + 0.035 * ((ncomp + 2) // 3), 1, 1))
    fig.savefig(args.out, dpi=args.dpi)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
