# simulate() and evaluate(): the CLI's row and trace, from names, schedule dicts and files.
import json
import os
import subprocess
import sys

import pytest

import zbsim
from conftest import UNIT

KW = dict(p=4, m=8, tf=1, tb=1, tw=1)


def test_simulate_gives_the_cli_row_and_trace(cli, tmp_path):
    trace_file = tmp_path / "zb-h1.json"
    expected = cli.json("simulate", *UNIT, "--tcomm", "0.25", "--schedule", "zb-h1", "--trace", str(trace_file))
    run = zbsim.simulate("zb-h1", tcomm=0.25, **KW)
    assert set(run) == {"problem", "result", "trace"}
    assert run["result"] == expected["results"][0]
    assert run["problem"] == expected["problem"]
    assert run["trace"] == json.loads(trace_file.read_text())
    assert zbsim.read_trace(trace_file) == run["trace"]
    assert run["trace"]["metrics"]["span"] == run["result"]["span"] > 27  # communication in every round


def test_evaluate_runs_a_schedule_dict_the_same_as_its_name():
    by_name = zbsim.evaluate("zb-h2", **KW)
    schedule = zbsim.schedule("zb-h2", p=4, m=8)
    assert zbsim.evaluate(schedule, tf=1, tb=1, tw=1)["result"] == by_name["result"]  # p, m from the schedule
    assert by_name["result"]["span"] == 24


def test_a_pytorch_csv_file_runs_as_the_cli_runs_it(cli, source_dir):
    csv = source_dir / "tests" / "data" / "pytorch" / "zb1p_2rank_2stagep_compute.csv"
    expected = cli.json("simulate", "--schedule-file", str(csv), "--tf", "1", "--tb", "1", "--tw", "1")
    run = zbsim.simulate(schedule_file=csv, tf=1, tb=1, tw=1)
    assert run["result"] == expected["results"][0]
    assert run["problem"]["chunks"] == 2 and run["problem"]["p"] == 2


def test_engine_errors_are_the_clis(cli):
    for flags, keywords in [(["--engine", "ns3"], dict(engine="ns3")),
                            (["--cluster", "ideal"], dict(cluster="ideal"))]:
        message = cli.error("simulate", *UNIT, *flags)
        with pytest.raises(ValueError) as error:
            zbsim.simulate("zb-h1", **keywords, **KW)
        assert str(error.value) == message
    with pytest.raises(TypeError, match="either schedule or schedule_file"):
        zbsim.simulate("zb-h1", schedule_file="x.txt", **KW)


@pytest.mark.skipif("simgrid" not in zbsim.engines(), reason="this build has no SimGrid")
def test_simgrid_on_the_ideal_network_reproduces_the_evaluator(cli):
    evaluated = zbsim.evaluate("1f1b", tcomm=0.1, **KW)["result"]
    simulated = zbsim.simulate("1f1b", engine="simgrid", cluster="ideal", tcomm=0.1, **KW)
    expected = cli.json("simulate", *UNIT, "--tcomm", "0.1", "--schedule", "1f1b", "--engine", "simgrid",
                        "--cluster", "ideal")["results"][0]
    assert simulated["result"] == expected
    assert simulated["trace"]["meta"]["engine"] == "simgrid"
    assert simulated["result"]["makespan"] == pytest.approx(evaluated["makespan"], rel=1e-12)
    assert "step_time_sync" in simulated["result"]
    assert "step_time_post_validation" in simulated["result"]


def test_trace_columns_are_numpy_arrays_pandas_can_take():
    numpy = pytest.importorskip("numpy")
    trace = zbsim.simulate("zb-h1", steps=1, tcomm=0.5, **KW)["trace"]  # one step: the metrics' busy time
    columns = zbsim.trace_columns(trace)
    assert set(columns) == {"device", "stream", "kind", "stage", "microbatch", "chunk", "start", "end"}
    assert all(isinstance(c, numpy.ndarray) and len(c) == len(trace["spans"]) for c in columns.values())
    compute = columns["stream"] == "compute"
    busy = [float((columns["end"] - columns["start"])[compute & (columns["device"] == d)].sum()) for d in range(4)]
    assert busy == pytest.approx(trace["metrics"]["busy"])
    assert set(columns["stream"]) == {"compute", "send", "recv"}
    first = trace["spans"][0]
    assert {key: columns[key][0] for key in columns} == {key: first[key] for key in columns}


def test_trace_columns_are_lists_without_numpy():
    # A None entry in sys.modules makes `import numpy` fail as it does where it is not installed.
    code = ("import sys; sys.modules['numpy'] = None; import zbsim; "
            "t = zbsim.simulate('1f1b', steps=1, p=2, m=2, tf=1, tb=1, tw=1)['trace']; c = zbsim.trace_columns(t); "
            "print(type(c['start']).__name__, c['start'], c['kind'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert done.returncode == 0, done.stderr
    # 1F1B, p=2, m=2, unit costs: d0 runs F0 F1 at 0 and 1, BW0 at 4, BW1 at 7; d1 F0 at 1, BW0 at 2, F1 at 4, BW1 at 5.
    assert done.stdout.strip() == "list [0.0, 1.0, 4.0, 7.0, 1.0, 2.0, 4.0, 5.0] ['F', 'F', 'BW', 'BW', 'F', 'BW', 'F', 'BW']"
