# The README's Python one-liner prints what the README says it prints.
import os
import re
import subprocess
import sys

from conftest import SOURCE_DIR


def test_the_readme_one_liner_reproduces_the_unit_cost_spans():
    readme = (SOURCE_DIR / "README.md").read_text()
    found = re.search(r"^PYTHONPATH=build/python python3 -c '([^']*)'\n# (.*)$", readme, re.MULTILINE)
    assert found, "README.md lost its 'From Python' one-liner"
    code, printed = found.groups()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == printed
    assert printed == "{'1f1b': 33.0, 'zb-h1': 27.0, 'zb-h2': 24.0}"
