# The example script: prints the frontier, plots it when matplotlib is there, skips the plot when not.
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

import zbsim

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "plot_frontier.py"
ARGS = ["--p", "4", "--m", "8", "--from", "1", "--to", "2"]


def run_example(out, without_matplotlib=False):
    argv = [str(EXAMPLE), *ARGS, "--out", str(out)]
    # A None entry in sys.modules makes `import matplotlib` fail as it does where it is not installed.
    code = (f"import runpy, sys; sys.argv = {argv!r}; "
            + ("sys.modules['matplotlib'] = None; " if without_matplotlib else "")
            + f"runpy.run_path({str(EXAMPLE)!r}, run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)


def check_table(stdout):
    lines = stdout.splitlines()
    assert lines[0].split() == ["limit", "linear", "vshape"]
    expected = zbsim.frontier(from_=1, to=2, p=4, m=8, tf=18.522, tb=18.086, tw=9.337, tcomm=0.601)
    for line, linear, vshape in zip(lines[1:], *(c["frontier"] for c in expected["curves"])):
        assert line.split() == [f"{linear['limit_times_p']:5.3f}p", f"{100 * linear['zb-auto']['bubble_rate']:.2f}%",
                                f"{100 * vshape['zb-auto']['bubble_rate']:.2f}%"]


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed")
def test_the_frontier_example_plots_with_matplotlib(tmp_path):
    done = run_example(tmp_path / "frontier.png")
    assert done.returncode == 0, done.stderr
    check_table(done.stdout)
    assert (tmp_path / "frontier.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_frontier_example_skips_the_plot_without_matplotlib(tmp_path):
    done = run_example(tmp_path / "frontier.png", without_matplotlib=True)
    assert done.returncode == 0, done.stderr
    check_table(done.stdout)
    assert "matplotlib is not installed" in done.stderr
    assert not (tmp_path / "frontier.png").exists()
