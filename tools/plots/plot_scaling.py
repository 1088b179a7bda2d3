#!/usr/bin/python3
"""Plot sap_bench scaling runs: throughput (world-steps/s) and aggregate realtime factor versus
the number of worlds, one line per JSON file (e.g. a CPU and a GPU run of the same scene).

    build/sap_bench scenes/box_stack_5.json --scaling-max 4096 --json bench/results/scaling.json
    /usr/bin/python3 tools/plots/plot_scaling.py bench/results/scaling.json --out bench/results/scaling.png

Needs matplotlib: the Debian package python3-matplotlib installs it for /usr/bin/python3 (run
the script with that interpreter if the python3 on your PATH lacks it), or `pip install matplotlib`.
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        d = json.load(f)
    if d.get("tool") != "sap_bench" or d.get("mode") != "scaling":
        sys.exit(f"{path}: not a sap_bench scaling record (run sap_bench with --scaling or --scaling-max)")
    recs = [r for r in d["records"] if r.get("world_steps_per_s")]
    if not recs:
        sys.exit(f"{path}: no records with a throughput")
    return d, recs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="scaling JSON files written by sap_bench --json")
    ap.add_argument("--out", default="scaling.png", help="output PNG (default scaling.png)")
    ap.add_argument("--title", default=None, help="figure title (default: the scene names)")
    ap.add_argument("--dpi", type=int, default=90, help="resolution (default 90, keeps the PNG small)")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        sys.exit("matplotlib is missing for " + sys.executable +
                 ": run this script with /usr/bin/python3 (python3-matplotlib) or pip install matplotlib")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    scenes = []
    for path in args.json:
        d, recs = load(path)
        n = [r["nworld"] for r in recs]
        label = f'{d["scene"]}, {d["device"]}'
        scenes.append(d["scene"])
        ax1.plot(n, [r["world_steps_per_s"] for r in recs], "o-", ms=3, label=label)
        ax2.plot(n, [r["realtime_factor_aggregate"] for r in recs], "o-", ms=3, label=label)
        failed = [r["nworld"] for r in recs if r.get("failed_worlds")]
        if failed:
            print(f"{path}: failed worlds at nworld {failed}", file=sys.stderr)
        if d.get("stopped"):
            print(f"{path}: {d['stopped']}", file=sys.stderr)
    for ax, ylabel in ((ax1, "world-steps / s"), (ax2, "realtime factor (aggregate)")):
        try:
            ax.set_xscale("log", base=2)
        except TypeError:  # matplotlib < 3.3
            ax.set_xscale("log", basex=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        if hi / lo < 100:  # less than two decades: label the minor ticks too
            fmt = matplotlib.ticker.FuncFormatter(lambda y, _: f"{y:.3g}")
            ax.yaxis.set_major_formatter(fmt)
            ax.yaxis.set_minor_formatter(fmt)
            ax.tick_params(axis="y", which="minor", labelsize=7)
        ax.set_xlabel("worlds (nworld)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=7)
    fig.suptitle(args.title or "sap_bench scaling: " + ", ".join(sorted(set(scenes))), fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=args.dpi)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
