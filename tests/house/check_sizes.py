#!/usr/bin/env python3
"""Fails on a source file over 800 lines or a function over 150 lines, outside tests.

Long files and functions grow one step at a time; this check stops the step that crosses the line
(issue 27 split the ones that had). A function is a brace block whose opening line is not a
namespace, class, struct, union, enum or extern block, measured from its opening brace to its
closing one, nested blocks (lambdas, loops) inside it; strings, characters and comments are skipped.
Folders checked: models, sim, exec, gui, python, bench. Exit 0 when all fit, 1 with one line each.
Usage: check_sizes.py [REPO_ROOT]
"""
import os
import re
import sys

from check_layers import run_check

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150
FOLDERS = ("models", "sim", "exec", "gui", "python", "bench")
SOURCE = (".h", ".hpp", ".cpp", ".cu", ".cuh")
NOT_A_FUNCTION = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace|class|struct|union|enum|extern)\b")
RAW_STRING = re.compile(r'R"([^(\s]*)\(')


def code_of(line, state):
    """The line without strings, character literals and comments; state['comment'] spans lines."""
    out = []
    i = 0
    while i < len(line):
        if state["comment"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["comment"] = False
            i = end + 2
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            state["comment"] = True
            i += 2
        elif line.startswith('R"', i) and RAW_STRING.match(line, i):
            delimiter = ")" + RAW_STRING.match(line, i).group(1) + '"'
            end = line.find(delimiter, i)
            i = len(line) if end < 0 else end + len(delimiter)
        elif line[i] in "\"'":
            quote = line[i]
            i += 1
            while i < len(line) and line[i] != quote:
                i += 2 if line[i] == "\\" else 1
            i += 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def long_functions(path, lines):
    found = []
    state = {"comment": False}
    open_blocks = []  # (line index, opening line, inside a reported function)
    reported_until = -1
    for number, line in enumerate(lines):
        for char in code_of(line, state):
            if char == "{":
                open_blocks.append((number, line))
            elif char == "}" and open_blocks:
                start, opening = open_blocks.pop()
                length = number - start + 1
                if length > MAX_FUNCTION_LINES and not NOT_A_FUNCTION.match(opening) and start > reported_until:
                    found.append(f"{path}:{start + 1}: a block of {length} lines (at most {MAX_FUNCTION_LINES}): "
                                 f"{opening.strip()[:70]}")
                    reported_until = number
    return found


def oversized(root):
    found = []
    for folder in FOLDERS:
        for directory, subdirs, files in os.walk(os.path.join(root, folder)):
            subdirs.sort()
            for name in sorted(files):
                if not name.endswith(SOURCE):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as text:
                    lines = text.read().split("\n")
                if len(lines) > MAX_FILE_LINES:
                    found.append(f"{path}: {len(lines)} lines (at most {MAX_FILE_LINES})")
                found.extend(long_functions(path, lines))
    return found


if __name__ == "__main__":
    sys.exit(run_check(oversized, lambda n: f"check_sizes: {n} file(s) or function(s) too long"))
