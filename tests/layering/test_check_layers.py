#!/usr/bin/env python3
"""check_layers.py on small made-up trees: a downward include passes; an upward one, a sideways one
between rooms of one floor, and one into tests/ fail, each named with its file and line."""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")


def run(files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as out:
                out.write(text)
        done = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
        return done.returncode, done.stdout


def expect(files, code, words):
    got, out = run(files)
    assert got == code, f"exit {got}, wanted {code}: {out}"
    for word in words:
        assert word in out, f"{word!r} missing from: {out}"


expect({"sim/core/a.h": '#include "sim/support/error.h"\n#include <vector>\n#include "sim/core/b.h"\n'}, 0, ["0 include"])
expect({"sim/core/a.cpp": 'x\n#include "sim/solver/auto_schedule.h"\n'}, 1, ["sim/core/a.cpp:2: sim/core -> sim/solver (up)"])
expect({"sim/app/plan/a.cpp": '#include "sim/app/sweep/grid.h"\n'}, 1, ["sim/app/plan -> sim/app/sweep (sideways)"])
expect({"models/a.cpp": '#include "sim/core/problem.h"\n'}, 1, ["models -> sim/core (up)"])
expect({"exec/cpu/a.cpp": '#include "tests/testing/problems.h"\n'}, 1, ["outside the house"])
expect({"sim/app/catalog/a.cpp": '#include "sim/core/detail/channel_order.h"\n'}, 1, ["internal to sim/core"])
expect({"sim/core/a.cpp": '#include "sim/core/detail/channel_order.h"\n', "sim/core/generators/g.cpp": '#include "sim/core/detail/x.h"\n'}, 0, [])
expect({"tests/core/t.cpp": '#include "sim/cli/common/command_line.h"\n'}, 0, [])
print("test_check_layers: 8 cases passed")
