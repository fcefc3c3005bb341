# The contract scripts rely on: compare() returns the rows of `zbsim compare --format json`.
import json

import pytest

import zbsim
from conftest import UNIT

SCHEDULES = ["1f1b", "zb-h1", "zb-h2"]


def test_compare_returns_the_rows_of_the_cli_json(cli):
    rows = zbsim.compare(p=4, m=8, tf=1, tb=1, tw=1, schedules=SCHEDULES)
    expected = cli.json("compare", *UNIT, "--schedules", ",".join(SCHEDULES))["results"]
    assert rows == expected
    assert [list(row) for row in rows] == [list(row) for row in expected]  # the same keys, in the same order


def test_the_readme_unit_cost_spans():
    rows = zbsim.compare(p=4, m=8, tf=1, tb=1, tw=1, schedules=SCHEDULES)
    assert {row["schedule"]: row["span"] for row in rows} == {"1f1b": 33, "zb-h1": 27, "zb-h2": 24}
    assert all(row["status"] == "ok" for row in rows)


def test_every_schedule_with_per_device_costs_a_limit_and_communication(cli):
    # The README's second example: over-limit rows with their reasons, extras-free rows, V schedules.
    flags = ["--p", "4", "--m", "12", "--tf", "1,1,1,1.2", "--tb", "2", "--tw", "1", "--tcomm", "0.1",
             "--mem-limit", "2p"]
    expected = cli.json("compare", *flags, "--schedules", "gpipe,1f1b,1f1b-i,zb-h1,zb-h2,zb-v,zb-auto,zb-2p")
    rows = zbsim.compare(p=4, m=12, tf=[1, 1, 1, 1.2], tb=2, tw=1, tcomm=0.1, mem_limit="2p",
                         schedules=["gpipe", "1f1b", "1f1b-i", "zb-h1", "zb-h2", "zb-v", "zb-auto", "zb-2p"])
    assert rows == expected["results"]
    assert {row["status"] for row in rows} == {"ok", "over-limit"}
    assert rows[0]["reason"].startswith("d0 peaks at 12 > limit 8")


def test_a_scenario_file_a_dict_and_keywords_agree(cli, source_dir):
    path = source_dir / "scenarios" / "examples" / "unit-p4-m8.json"
    expected = cli.json("compare", "--scenario", str(path))["results"]
    assert zbsim.compare(scenario=path) == expected  # the scenario's own schedules
    assert zbsim.compare(scenario=str(path)) == expected
    assert zbsim.compare(scenario=json.loads(path.read_text())) == expected
    # Keywords override the scenario's fields, as flags do.
    assert zbsim.compare(scenario=path, m=12, t_w=2) == cli.json("compare", "--scenario", str(path), "--m", "12",
                                                                  "--tw", "2")["results"]


def test_problem_keywords_take_the_scenario_key_or_the_flag_name():
    by_flag = zbsim.problem(p=4, m=8, tf=1, tb=2, tw=1, tcomm=0.5, mem_f=2, mem_b=-1, mem_w=-1, time_unit="us")
    by_key = zbsim.problem(p=4, m=8, t_f=1, t_b=2, t_w=1, t_comm=0.5, mem_f=2, mem_b=-1, mem_w=-1, time_unit="us")
    assert by_flag == by_key
    assert by_flag["t_b"] == 2 and by_flag["t_comm"] == 0.5 and by_flag["mem_f"] == 2 and by_flag["time_unit"] == "us"
    assert zbsim.problem(p=4, m=8, tf=[1, 2, 3, 4], tb=1, tw=1)["t_f"] == [1, 2, 3, 4]
    assert zbsim.problem(p=4, m=8, tf=1, tb=1, tw=1, tcomm=None) == zbsim.problem(p=4, m=8, tf=1, tb=1, tw=1)


# A typed API: each field takes its Python type, never text, bytes or a bool for a number (b"4" was
# read as the list [52], True as 1, "8" as 8); numpy's scalars and 1-D arrays are numbers.
@pytest.mark.parametrize("keywords, message", [
    (dict(p=b"4"), "compare(): p must be an int, got bytes b'4'"),
    (dict(p=4.0), "compare(): p must be an int, got float 4.0"),
    (dict(p=True), "compare(): p must be an int, got bool True"),
    (dict(m="8"), "compare(): m must be an int, got str '8'"),
    (dict(tf="1,2"), "compare(): tf must be a number or a list of numbers, got str '1,2'"),
    (dict(tf=[1, True]), "compare(): tf must be a number or a list of numbers (each an int or float), got list"),
    (dict(tw=False), "compare(): tw must be a number or a list of numbers, got bool False"),
    (dict(placement=1), "compare(): placement must be a str, got int 1"),
    (dict(mem_limit=b"2p"), "compare(): mem_limit must be a number or a str such as '2p', got bytes"),
])
def test_a_value_of_the_wrong_python_type_is_a_type_error(keywords, message):
    arguments = dict(p=4, m=8, tf=1, tb=1, tw=1)
    arguments.update(keywords)
    with pytest.raises(TypeError) as error:
        zbsim.compare(**arguments, schedules=["zb-h1"])
    assert str(error.value).startswith(message)


def test_numpy_scalars_and_arrays_are_numbers():
    numpy = pytest.importorskip("numpy")
    plain = zbsim.compare(p=4, m=8, tf=[1.0, 2.0, 3.0, 4.0], tb=1.5, tw=1, schedules=["zb-h1"])
    with_numpy = zbsim.compare(p=numpy.int64(4), m=numpy.int32(8), tf=numpy.array([1.0, 2.0, 3.0, 4.0]),
                               tb=numpy.float32(1.5), tw=numpy.float64(1), schedules=["zb-h1"])
    assert with_numpy == plain
    with pytest.raises(TypeError):
        zbsim.compare(p=4, m=8, tf=numpy.array([[1, 2], [3, 4]]), tb=1, tw=1)
    with pytest.raises(TypeError):
        zbsim.compare(p=numpy.bool_(True), m=8, tf=1, tb=1, tw=1)


@pytest.mark.parametrize("flags, keywords", [
    (["--p", "4", "--m", "8", "--tf", "1,-2", "--tb", "1", "--tw", "1"], dict(p=4, m=8, tf=[1, -2], tb=1, tw=1)),
    (["--p", "4", "--m", "8", "--tf", "1,2,3", "--tb", "1", "--tw", "1"], dict(p=4, m=8, tf=[1, 2, 3], tb=1, tw=1)),
    (["--m", "8", "--tf", "1", "--tb", "1", "--tw", "1"], dict(m=8, tf=1, tb=1, tw=1)),
    (["--p", "4", "--m", "8", "--tf", "1", "--tb", "1", "--tw", "1", "--mem-limit", "2q"],
     dict(p=4, m=8, tf=1, tb=1, tw=1, mem_limit="2q")),
    (UNIT + ["--mem-limit", "auto"], dict(p=4, m=8, tf=1, tb=1, tw=1, mem_limit="auto")),
    (UNIT + ["--schedules", "1f1b,nope"], dict(p=4, m=8, tf=1, tb=1, tw=1, schedules=["1f1b", "nope"])),
])
def test_bad_input_is_a_value_error_with_the_cli_message(cli, flags, keywords):
    message = cli.error("compare", *flags)
    with pytest.raises(ValueError) as error:
        zbsim.compare(**keywords)
    assert str(error.value) == message


def test_an_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'tff'"):
        zbsim.compare(p=4, m=8, tff=1)
    with pytest.raises(TypeError, match="t_f and tf are the same field"):
        zbsim.problem(p=4, m=8, t_f=1, tf=1)


def test_the_catalog_lists_what_the_build_has(cli):
    assert {"gpipe", "1f1b", "zb-h1", "zb-h2", "zb-auto"} <= set(zbsim.generators())
    assert zbsim.engines()[0] == "eval"
    assert zbsim.__version__ == cli.run("--version").stdout.split()[-1]


def test_model_driven_rows_carry_the_throughput_of_the_cli(cli, source_dir):
    # Item 5 of issue 14: samples/GPU/s, tokens/s, MFU in both optimizer modes and memory, as the CLI
    # prints them (1f1b-i runs on costs derived for two chunks).
    path = source_dir / "scenarios" / "models" / "paper-gpt-1.5b-p8-m24.json"
    schedules = ["zb-2p", "1f1b", "1f1b-i"]
    expected = cli.json("compare", "--scenario", str(path), "--schedules", ",".join(schedules))["results"]
    rows = zbsim.compare(scenario=path, schedules=schedules)
    assert rows == expected
    for row in rows:
        for mode in ("", "_sync", "_post_validation"):
            assert row["samples_per_s_per_gpu" + mode] > 0
            assert row["tokens_per_s" + mode] > 0
            assert 0 < row["mfu" + mode] < 1
        assert row["memory_GB"] > 0
    assert rows[0]["samples_per_s_per_gpu"] == rows[0]["samples_per_s_per_gpu_post_validation"]
    assert rows[1]["samples_per_s_per_gpu"] == rows[1]["samples_per_s_per_gpu_sync"]
    assert rows[2]["chunks"] == 2
