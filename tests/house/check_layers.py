#!/usr/bin/env python3
"""Fails on an #include that goes up a floor or sideways between rooms of one floor.

The floors, bottom up (docs/design.md draws them): models < sim < {exec, gui, python}; inside sim,
support < core < formats < solver < simgrid < app (catalog < {plan, sweep, validate}) < cli (common < zbsim).
A file may include its own folder, any folder on a lower floor, and third-party headers; a
folder's detail/ headers are for that folder alone. Tests, benchmarks and scripts sit outside the
house and may include anything. Exit 0 when every include
goes down, 1 with one line per violation (file:line: folder -> folder) otherwise.
Usage: check_layers.py [REPO_ROOT]
"""
import os
import re
import sys

# Folder -> floor. Two folders on one floor are rooms that may not include each other.
FLOORS = {
    "models": 0,
    "sim/support": 1,
    "sim/core": 2,
    "sim/formats": 3,
    "sim/solver": 4,
    "sim/simgrid": 5,
    "sim/app/catalog": 6,
    "sim/app/plan": 7,
    "sim/app/sweep": 7,
    "sim/app/validate": 7,
    "sim/cli/common": 8,
    "sim/cli": 9,
    "exec/runtime": 10,
    "exec/mpi": 10,
    "exec/multiprocess": 11,
    "exec/cpu": 12,
    "exec/cuda": 12,
    "exec/calibration": 12,
    "exec/cli": 13,
    "gui/viewer_core": 10,
    "gui/app": 11,
    "python": 10,
}
OUTSIDE = ("tests/", "bench/", "scripts/", "build", ".git")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE = (".h", ".hpp", ".cpp", ".cu", ".cuh")


def folder_of(path):
    """The longest folder of FLOORS that holds path, or None for a path outside the house."""
    best = None
    for folder in FLOORS:
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def violations(root):
    found = []
    for directory, subdirs, files in os.walk(root):
        rel_dir = os.path.relpath(directory, root)
        if rel_dir != "." and rel_dir.startswith(OUTSIDE):
            subdirs[:] = []
            continue
        for name in sorted(files):
            if not name.endswith(SOURCE):
                continue
            path = os.path.normpath(os.path.join(rel_dir, name))
            source = folder_of(path)
            if source is None:
                continue
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as text:
                for number, line in enumerate(text, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    target = folder_of(match.group(1))
                    if match.group(1).startswith(OUTSIDE[:2]):
                        found.append(f"{path}:{number}: {source} -> {match.group(1)} (outside the house)")
                    elif target is not None and target != source and "/detail/" in match.group(1):
                        found.append(f"{path}:{number}: {source} -> {match.group(1)} (internal to {target})")
                    elif target is None or target == source:
                        continue
                    elif FLOORS[target] >= FLOORS[source]:
                        kind = "sideways" if FLOORS[target] == FLOORS[source] else "up"
                        found.append(f"{path}:{number}: {source} -> {target} ({kind})")
    return sorted(found)


def run_check(check, summary):
    """Runs check(repo root) -> lines, prints them and summary(count); the exit status: 1 if any."""
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    found = check(os.path.abspath(root))
    for line in found:
        print(line)
    print(summary(len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(run_check(violations, lambda n: f"check_layers: {n} include(s) going up or sideways"))
