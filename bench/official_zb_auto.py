#!/usr/bin/env python3
"""zb-auto against the official zero-bubble scheduler, whole process (issue 17 item 1).

Times, in interleaved paired runs, `zbsim export --schedule zb-auto` and the official heuristic
schedule (`zb.create_schedule` of sail-sg/zero-bubble-pipeline-parallelism, its graph.py and zb.py
loaded from a checkout given with --official; the rest of Megatron is not imported), each as a
fresh process, on the paper's 1.5B costs at 1F1B's memory (zb-1p), and prints one table: medians,
the ratio, and both schedules' spans. The official code needs torch and pulp (Debian:
python3-torch python3-pulp), run with /usr/bin/python3 unless --python says otherwise.

    python3 bench/official_zb_auto.py --official ~/zero-bubble-pipeline-parallelism \
        --zbsim build/sim/cli/zbsim [--runs 5] [--shapes 16x128,32x256]
"""
import argparse
import statistics
import subprocess
import sys
import time

# The paper's profile of its 1.5B GPT (Table 2 setting, ms): t_f, t_b, t_w, t_comm.
COSTS = (18.522, 18.086, 9.337, 0.601)

# Run in a fresh interpreter: loads the official scheduler from a checkout, schedules, prints its span.
OFFICIAL = r"""
import importlib.util, sys, types
repo, p, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f, b, w, comm = (float(x) for x in sys.argv[4:8])
base = "megatron.core.pipeline_parallel.zerobubble.scheduler"
parts = base.split(".")
for i in range(1, len(parts) + 1):
    package = types.ModuleType(".".join(parts[:i]))
    package.__path__ = []
    sys.modules[package.__name__] = package
def load(name):
    spec = importlib.util.spec_from_file_location(
        base + "." + name, repo + "/megatron/core/pipeline_parallel/zerobubble/scheduler/" + name + ".py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
graph, zb = load("graph"), load("zb")
# Memory in half-M_B units (the official asserts mem_f + mem_b + mem_w == 0): F +2, B -1, W -1, and
# the limit 1F1B's p microbatches, as zb-1p.
config = graph.GraphConfig(mem_f=[2.0] * p, mem_b=[-1.0] * p, mem_w=[-1.0] * p, max_mem=[2.0 * p] * p,
                           cost_f=[f] * p, cost_b=[b] * p, cost_w=[w] * p, cost_comm=comm, n_stages=p, n_micro=m)
import time
start = time.perf_counter()
g = zb.Graph.build_graph(p, m, config)
best_time, order, complete_time = zb.initial_solution(g, print_result=False)
zb.create_scheduled_nodes(g, complete_time)
print("seconds", time.perf_counter() - start, "span", best_time)
"""


def timed(command):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr[-2000:]}")
    return elapsed, result.stdout


def zbsim_span(zbsim, p, m):
    f, b, w, comm = COSTS
    out = subprocess.run([zbsim, "simulate", "--schedule", "zb-auto", "--p", str(p), "--m", str(m), "--tf", str(f),
                          "--tb", str(b), "--tw", str(w), "--tcomm", str(comm), "--mem-limit", "1p", "--format",
                          "json"], capture_output=True, text=True, check=True).stdout
    import json
    return json.loads(out)["results"][0]["span"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--official", required=True, help="checkout of sail-sg/zero-bubble-pipeline-parallelism")
    parser.add_argument("--zbsim", default="build/sim/cli/zbsim")
    parser.add_argument("--python", default="/usr/bin/python3", help="interpreter with torch and pulp")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shapes", default="16x48,16x128,32x256", help="PxM,... (default %(default)s)")
    args = parser.parse_args()
    f, b, w, comm = COSTS
    print(f"zb-auto (zbsim export, whole process) vs the official zb.create_schedule (fresh {args.python}, "
          f"torch import included); 1.5B costs {f}/{b}/{w} ms, t_comm {comm}, 1F1B's memory; median of "
          f"{args.runs} interleaved runs")
    print("(official s: the whole process; of which scheduling: build_graph + initial_solution + create_scheduled_nodes)")
    print(f"{'p':>4} {'m':>5} {'official s':>11} {'scheduling s':>13} {'zbsim ms':>9} {'ratio':>8} {'ratio sched.':>13} "
          f"{'official span':>14} {'zbsim span':>11}")
    for shape in args.shapes.split(","):
        p, m = (int(x) for x in shape.split("x"))
        official_cmd = [args.python, "-c", OFFICIAL, args.official, str(p), str(m), str(f), str(b), str(w), str(comm)]
        zbsim_cmd = [args.zbsim, "export", "--schedule", "zb-auto", "--p", str(p), "--m", str(m), "--tf", str(f),
                     "--tb", str(b), "--tw", str(w), "--tcomm", str(comm), "--mem-limit", "1p", "--to", "text",
                     "--out", "/dev/null"]
        official_times, scheduling_times, zbsim_times, official_span = [], [], [], None
        for _ in range(args.runs):
            seconds, out = timed(official_cmd)
            words = out.split()
            official_times.append(seconds)
            scheduling_times.append(float(words[1]))
            official_span = float(words[3])
            zbsim_times.append(timed(zbsim_cmd)[0])
        o, s, z = (statistics.median(x) for x in (official_times, scheduling_times, zbsim_times))
        print(f"{p:>4} {m:>5} {o:>11.3f} {s:>13.3f} {1e3 * z:>9.2f} {o / z:>7.0f}x {s / z:>12.0f}x "
              f"{official_span:>14.2f} {zbsim_span(args.zbsim, p, m):>11.2f}")


if __name__ == "__main__":
    main()
