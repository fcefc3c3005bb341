#!/usr/bin/env python3
"""Fails when a library other than zb_cli_common links Boost.ProgramOptions.

A command line is the front ends' business: sim/cli/common (zb_cli_common) is the one library that
parses one, and the executables link it. Every target_link_libraries(...) that names
Boost::program_options in a CMakeLists.txt must be for zb_cli_common or an add_executable target.
Exit 0 when so, 1 with one line per offender. Usage: check_program_options.py [REPO_ROOT]
"""
import os
import re
import sys

from check_layers import run_check

ALLOWED_LIBRARY = "zb_cli_common"
LINK = re.compile(r"target_link_libraries\(\s*([A-Za-z0-9_:.-]+)([^)]*)\)", re.S)
EXECUTABLE = re.compile(r"add_executable\(\s*([A-Za-z0-9_.-]+)")


def cmake_files(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith((".", "build"))]
        for name in files:
            if name == "CMakeLists.txt" or name.endswith(".cmake"):
                yield os.path.join(directory, name)


def offenders(root):
    texts = {path: open(path, encoding="utf-8").read() for path in cmake_files(root)}
    executables = {m.group(1) for text in texts.values() for m in EXECUTABLE.finditer(text)}
    found = []
    for path, text in sorted(texts.items()):
        for match in LINK.finditer(text):
            target, rest = match.group(1), match.group(2)
            if "Boost::program_options" in rest and target != ALLOWED_LIBRARY and target not in executables:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{os.path.relpath(path, root)}:{line}: {target} links Boost::program_options")
    return found


if __name__ == "__main__":
    sys.exit(run_check(offenders, lambda n: f"check_program_options: {n} librar{'y' if n == 1 else 'ies'} besides "
                                            f"{ALLOWED_LIBRARY} link it"))
