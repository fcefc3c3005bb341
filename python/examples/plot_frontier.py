#!/usr/bin/env python3
"""Plots a memory frontier (bubble rate against the memory limit) with matplotlib.

    PYTHONPATH=build/python python3 python/examples/plot_frontier.py --out frontier.png
    PYTHONPATH=build/python python3 python/examples/plot_frontier.py --scenario scenarios/paper/gpt-1.5b-p8-m24.json

The numbers come from zbsim.frontier() (what `zbsim frontier --format json` prints) and are
printed as a table; the plot needs matplotlib (Debian: python3-matplotlib) and is skipped, with a
note, when it is missing.
"""
import argparse
import sys

import zbsim

# The paper's 1.5B GPT on 8 GPUs (profiled stage times, ms), as in the README.
PAPER_1_5B = dict(p=8, m=24, tf=18.522, tb=18.086, tw=9.337, tcomm=0.601)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", help="a scenario file (default: the paper's 1.5B setting, p=8 m=24)")
    parser.add_argument("--p", type=int, help="devices (overrides the scenario)")
    parser.add_argument("--m", type=int, help="microbatches (overrides the scenario)")
    parser.add_argument("--from", dest="start", type=float, default=0.5, help="first limit, in multiples of p M_B")
    parser.add_argument("--to", dest="stop", type=float, default=3.0, help="last limit")
    parser.add_argument("--out", default="frontier.png", help="the picture to write")
    args = parser.parse_args()

    problem = {} if args.scenario else dict(PAPER_1_5B)
    problem.update({key: value for key, value in (("p", args.p), ("m", args.m)) if value is not None})
    try:
        frontier = zbsim.frontier(from_=args.start, to=args.stop, scenario=args.scenario, **problem)
    except ValueError as error:
        sys.exit(f"plot_frontier: {error}")

    curves = [curve for curve in frontier["curves"]]
    print("limit   " + "  ".join(f"{curve['placement']:>10}" for curve in curves))
    for k, point in enumerate(curves[0]["frontier"]):
        cells = []
        for curve in curves:
            auto = curve["frontier"][k]["zb-auto"]
            cells.append(f"{100 * auto['bubble_rate']:>9.2f}%" if auto["status"] == "ok" else f"{'infeasible':>10}")
        print(f"{point['limit_times_p']:5.3f}p " + "  ".join(cells))

    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_frontier: matplotlib is not installed (Debian: python3-matplotlib): no plot written",
              file=sys.stderr)
        return 0

    figure, axes = plt.subplots(figsize=(7, 4))
    for curve in curves:
        points = [(p["limit_times_p"], 100 * p["zb-auto"]["bubble_rate"]) for p in curve["frontier"]
                  if p["zb-auto"]["status"] == "ok"]
        label = f"zb-auto, {curve['placement']} ({curve['chunks']} chunk{'s' if curve['chunks'] > 1 else ''})"
        axes.plot([x for x, _ in points], [y for _, y in points], marker="o", label=label)
    spec = frontier["problem"]
    axes.set_title(f"Memory frontier: p={spec['p']} m={spec['m']}")
    axes.set_xlabel("activation memory limit (multiples of p M_B)")
    axes.set_ylabel("bubble rate (%)")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(args.out, dpi=120)
    print(f"plot_frontier: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
