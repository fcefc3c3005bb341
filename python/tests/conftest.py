# Shared helpers: the built zbsim command line, to hold the module to the CLI's contract.
import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("ZB_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
ZBSIM_CLI = os.environ.get("ZBSIM_CLI", str(SOURCE_DIR / "build" / "sim" / "cli" / "zbsim"))
UNIT = ["--p", "4", "--m", "8", "--tf", "1", "--tb", "1", "--tw", "1"]


class Cli:
    """Runs the zbsim command line."""

    def run(self, *args, check=True):
        done = subprocess.run([ZBSIM_CLI, *args], capture_output=True, text=True)
        if check and done.returncode != 0:
            raise AssertionError(f"zbsim {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done

    def json(self, *args):
        return json.loads(self.run(*args, "--format", "json").stdout)

    def error(self, *args):
        """The message of a refused command: 'zbsim CMD: error: MESSAGE' without the prefix."""
        done = self.run(*args, check=False)
        assert done.returncode == 2, done
        prefix = f"zbsim {args[0]}: error: "
        assert done.stderr.startswith(prefix), done.stderr
        return done.stderr[len(prefix):].rstrip("\n")


@pytest.fixture
def cli():
    if not os.access(ZBSIM_CLI, os.X_OK):
        pytest.fail(f"zbsim not built at {ZBSIM_CLI} (set ZBSIM_CLI)")
    return Cli()


@pytest.fixture
def source_dir():
    return SOURCE_DIR
