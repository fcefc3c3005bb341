# Schedules as lists of actions, and every schedule and trace format read and written.
import pytest

import zbsim
from conftest import UNIT


def test_a_schedule_is_our_json_form_and_its_actions_are_records(cli):
    schedule = zbsim.schedule("zb-h1", p=4, m=8)
    assert schedule["schedule"] == "zb-h1" and len(schedule["devices"]) == 4
    assert schedule["devices"][0][:3] == ["F0", "F1", "F2"]
    actions = zbsim.actions(schedule)
    assert len(actions) == 4 * 8 * 3
    assert actions[0] == {"device": 0, "step": 0, "pass": "F", "microbatch": 0, "chunk": 0, "overlap_next": False,
                          "token": "F0"}
    assert {a["pass"] for a in actions} == {"F", "B", "W"}


@pytest.mark.parametrize("schedule, fmt, to", [("zb-h1", "text", "text"), ("zb-h2", "json", "json"),
                                               ("zb-h1", "pytorch-csv", "pytorch-csv"),
                                               ("1f1b-i", "pytorch-csv", "pytorch-csv"),
                                               ("dualpipe-v", "pytorch-csv", "pytorch-csv"),
                                               ("zb-h1", "pytorch-csv-comms", "pytorch-csv-comms"),
                                               ("zb-v", "pytorch-csv-comms", "pytorch-csv-comms")])
def test_formats_equal_zbsim_export(cli, schedule, fmt, to):
    expected = cli.run("export", "--schedule", schedule, "--p", "4", "--m", "8", "--to", to).stdout
    generated = zbsim.schedule(schedule, p=4, m=8)
    assert zbsim.format_schedule(generated, fmt, p=4, m=8) == expected


@pytest.mark.parametrize("name, fmt", [("a.txt", "text"), ("a.json", "json"), ("a.csv", "pytorch-csv")])
def test_write_then_read_gives_the_schedule_back(tmp_path, name, fmt):
    schedule = zbsim.schedule("zb-v", p=4, m=8)
    path = tmp_path / name
    zbsim.write_schedule(schedule, path)  # the format from the name
    assert path.read_text() == zbsim.format_schedule(schedule, fmt)
    back = zbsim.read_schedule(path)
    assert back["devices"] == schedule["devices"]
    assert back["placement"] == "vshape" and back["chunks"] == 2
    assert zbsim.parse_schedule(path.read_text())["devices"] == schedule["devices"]


def test_traces_in_every_format_equal_the_clis(cli, tmp_path):
    chrome, svg = tmp_path / "cli.chrome.json", tmp_path / "cli.svg"
    cli.run("simulate", *UNIT, "--tcomm", "0.1", "--schedule", "zb-h2", "--chrome", str(chrome), "--svg", str(svg))
    trace = zbsim.evaluate("zb-h2", p=4, m=8, tf=1, tb=1, tw=1, tcomm=0.1)["trace"]
    zbsim.write_trace(trace, tmp_path / "py.chrome.json")
    zbsim.write_trace(trace, tmp_path / "py.svg")
    zbsim.write_trace(trace, tmp_path / "py.json")
    assert (tmp_path / "py.chrome.json").read_text() == chrome.read_text()
    assert (tmp_path / "py.svg").read_text() == svg.read_text()
    assert zbsim.read_trace(tmp_path / "py.json") == trace
    both = zbsim.format_trace([trace, zbsim.evaluate("1f1b", p=4, m=8, tf=1, tb=1, tw=1)["trace"]], "svg")
    assert both.count("zb-h2") >= 1 and both.count("1f1b") >= 1


def test_bad_schedules_and_traces_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="mine.txt:1: bad action 'X1'"):
        zbsim.parse_schedule("d0: F0 X1\n", "mine.txt")
    with pytest.raises(ValueError, match="trace"):
        zbsim.format_trace({"meta": {}, "spans": 3}, "svg")
    with pytest.raises(ValueError, match="unknown schedule format 'yaml'"):
        zbsim.format_schedule(zbsim.schedule("1f1b", p=2, m=2), "yaml")
    missing = tmp_path / "missing.txt"
    with pytest.raises(ValueError, match="missing.txt"):
        zbsim.read_schedule(missing)


def test_offload_is_a_keyword_and_its_copies_are_actions():
    problem = dict(p=8, m=32, chunks=4, tf=1, tb=1, tw=1, t_offload=1)
    plain, offloaded = (zbsim.compare(["1f1b-i"], **problem, offload_chunks=k)[0] for k in (0, 2))
    assert offloaded["schedule"] == "1f1b-i+offload2"
    assert max(offloaded["peak_memory"]) < 0.6 * max(plain["peak_memory"])
    passes = {a["pass"] for a in zbsim.actions(zbsim.schedule("po-h", **problem))}
    assert passes == {"F", "B", "W", "O", "L"}
    with pytest.raises(TypeError, match="offload_chunks must be an int"):
        zbsim.compare(["1f1b-i"], **problem, offload_chunks=1.5)
