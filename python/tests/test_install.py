# The documented install works offline: pip installs the built package (build/python) into a venv.
import os
import pathlib
import subprocess
import sys

import pytest

import zbsim

BUILT = pathlib.Path(zbsim.__file__).resolve().parents[1]


@pytest.mark.skipif(not (BUILT / "setup.py").exists(), reason="zbsim is imported from an installed copy")
def test_pip_installs_the_built_module_into_a_venv_offline(tmp_path):
    pytest.importorskip("ensurepip")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", "--no-index", str(BUILT)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    code = ("import zbsim; print(zbsim.__file__); "
            "print([r['span'] for r in zbsim.compare(p=4, m=8, tf=1, tb=1, tw=1, schedules=['1f1b', 'zb-h1', 'zb-h2'])])")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    installed, spans = done.stdout.splitlines()
    assert installed.startswith(str(venv))
    assert spans == "[33.0, 27.0, 24.0]"
