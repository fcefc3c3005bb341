# sweep(): the rows of the sweep's JSON-lines file, as records pandas reads.
import json

import pytest

import zbsim

GRID = {
    "name": "python-test",
    "base": {"problem": {"p": 4, "t_f": 1, "t_b": 1, "t_w": 1, "mem_limit": "2p"}},
    "axes": {"m": [4, 8, 12], "schedule": ["1f1b", "zb-h1", "zb-h2", "zb-2p"]},
}


def test_sweep_rows_are_the_clis_json_lines(cli, tmp_path):
    grid_file = tmp_path / "grid.json"
    grid_file.write_text(json.dumps(GRID))
    cli.run("sweep", "--grid", str(grid_file), "--out", str(tmp_path / "r.csv"), "--jobs", "2")
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    from_file = zbsim.sweep(grid_file, jobs=2)
    assert from_file == lines
    # A dict gives the same rows (its source is named "grid" in errors instead of the file).
    assert zbsim.sweep(GRID, jobs=1) == lines
    assert [row["point"] for row in from_file] == list(range(12))
    assert list(from_file[0]["axes"]) == ["m", "schedule"]  # the dict's key order is the axis order
    assert from_file[-1]["axes"] == {"m": 12, "schedule": "zb-2p"}


def test_sweep_rows_make_a_dataframe():
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(zbsim.sweep(GRID, jobs=1))
    assert len(frame) == 12 and {"schedule", "m", "span", "bubble_rate"} <= set(frame.columns)


def test_sweep_errors_are_the_clis(cli, tmp_path):
    grid_file = tmp_path / "grid.json"
    grid_file.write_text(json.dumps(GRID))
    message = cli.error("sweep", "--grid", str(grid_file), "--out", str(tmp_path / "r.csv"), "--jobs", "0")
    with pytest.raises(ValueError) as error:
        zbsim.sweep(grid_file, jobs=0)
    assert str(error.value) == message
    bad = dict(GRID, axes={"m": [4], "schedule": ["nope"]})
    bad_file = tmp_path / "bad.json"
    bad_file.write_text(json.dumps(bad))
    message = cli.error("sweep", "--grid", str(bad_file), "--out", str(tmp_path / "r.csv"))
    with pytest.raises(ValueError) as error:
        zbsim.sweep(bad_file)
    assert str(error.value) == message


# Ctrl-C stops a long sweep at its next point with KeyboardInterrupt (the work runs beside the
# waiting thread, which looks at Python's signals every 100 ms), rather than after every point.
def test_ctrl_c_interrupts_a_long_sweep():
    import os
    import signal
    import subprocess
    import sys
    import time
    code = (
        "import sys, time, zbsim\n"
        "grid = {'base': {'problem': {'p': 64, 't_f': 1, 't_b': 1, 't_w': 1}},"
        " 'axes': {'m': list(range(256, 2304)), 'schedule': ['zb-h1']}}\n"
        "print('started', flush=True)\n"
        "try:\n"
        "    zbsim.sweep(grid, jobs=1)\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ))
    assert child.stdout.readline().strip() == "started"
    time.sleep(0.5)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert out.strip() == "interrupted", err
    assert time.monotonic() - sent < 10  # one point of p=64 takes milliseconds; the whole grid takes minutes
