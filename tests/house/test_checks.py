#!/usr/bin/env python3
"""The house's checks on small made-up trees. check_layers.py: a downward include passes; an upward
one, a sideways one between rooms of one floor, one into another folder's detail/ and one into
tests/ fail, each named with its file and line. check_program_options.py: a library linking
Boost.ProgramOptions fails, an executable passes. check_sizes.py: a long function and a long file
fail, a long namespace passes."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(script, files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as out:
                out.write(text)
        done = subprocess.run([sys.executable, os.path.join(HERE, script), root], capture_output=True, text=True)
        return done.returncode, done.stdout


def expect_check(script, files, code, words):
    got, out = run(script, files)
    assert got == code, f"{script}: exit {got}, wanted {code}: {out}"
    for word in words:
        assert word in out, f"{script}: {word!r} missing from: {out}"


def expect(files, code, words):
    expect_check("check_layers.py", files, code, words)


expect({"sim/core/a.h": '#include "sim/support/error.h"\n#include <vector>\n#include "sim/core/b.h"\n'}, 0, ["0 include"])
expect({"sim/core/a.cpp": 'x\n#include "sim/solver/auto_schedule.h"\n'}, 1, ["sim/core/a.cpp:2: sim/core -> sim/solver (up)"])
expect({"sim/app/plan/a.cpp": '#include "sim/app/sweep/grid.h"\n'}, 1, ["sim/app/plan -> sim/app/sweep (sideways)"])
expect({"models/a.cpp": '#include "sim/core/problem.h"\n'}, 1, ["models -> sim/core (up)"])
expect({"exec/cpu/a.cpp": '#include "tests/testing/problems.h"\n'}, 1, ["outside the house"])
expect({"sim/app/catalog/a.cpp": '#include "sim/core/detail/channel_order.h"\n'}, 1, ["internal to sim/core"])
expect({"sim/core/a.cpp": '#include "sim/core/detail/channel_order.h"\n', "sim/core/generators/g.cpp": '#include "sim/core/detail/x.h"\n'}, 0, [])
expect({"tests/core/t.cpp": '#include "sim/cli/common/command_line.h"\n'}, 0, [])
LINK = "add_library(zb_x a.cpp)\ntarget_link_libraries(zb_x PUBLIC Boost::program_options)\n"
expect_check("check_program_options.py", {"sim/x/CMakeLists.txt": LINK}, 1, ["zb_x links Boost::program_options"])
expect_check("check_program_options.py", {"sim/x/CMakeLists.txt": LINK.replace("add_library", "add_executable")}, 0, [])
BODY = "int f() {\n" + "  g();\n" * 151 + "}\n"
expect_check("check_sizes.py", {"sim/core/a.cpp": BODY}, 1, ["sim/core/a.cpp:1: a block of 153 lines"])
expect_check("check_sizes.py", {"sim/core/a.cpp": "namespace zb {\n" + BODY.replace("g();", "int x;") + "}\n"}, 1,
             ["sim/core/a.cpp:2: a block"])
expect_check("check_sizes.py", {"sim/core/a.cpp": "namespace zb {\n" + "int x;\n" * 200 + "}\n"}, 0, [])
expect_check("check_sizes.py", {"sim/core/a.cpp": "// a\n" * 801}, 1, ["sim/core/a.cpp: 802 lines"])
expect_check("check_sizes.py", {"tests/core/a.cpp": BODY}, 0, [])
print("test_checks: 15 cases passed")
