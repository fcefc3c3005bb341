# solve() and frontier(): the objects `zbsim solve` and `zbsim frontier` print as JSON.
import pytest

import zbsim

SOLVE_FLAGS = ["--p", "3", "--m", "4", "--tf", "1", "--tb", "1", "--tw", "1", "--mem-f", "2", "--mem-b", "-1",
               "--mem-w", "-1", "--mem-limit", "6"]
SOLVE_KW = dict(p=3, m=4, tf=1, tb=1, tw=1, mem_f=2, mem_b=-1, mem_w=-1, mem_limit=6)


def test_solve_gives_the_cli_row_and_a_schedule_that_evaluates_to_its_span(cli):
    expected = cli.json("solve", *SOLVE_FLAGS, "--time-limit", "20")["results"][0]
    solved = zbsim.solve(time_limit=20, **SOLVE_KW)
    row = solved["result"]
    assert list(row) == list(expected)
    assert {k: v for k, v in row.items() if k != "solve_seconds"} == \
           {k: v for k, v in expected.items() if k != "solve_seconds"}
    assert row["schedule"] == "zb-ilp" and row["status"] in ("optimal", "feasible")
    again = zbsim.evaluate(solved["schedule"], **SOLVE_KW)["result"]
    assert again["span"] == row["span"]


def test_an_infeasible_limit_is_the_clis_error(cli):
    flags = ["--p", "4", "--m", "8", "--tf", "1", "--tb", "1", "--tw", "1", "--mem-limit", "0.5"]
    message = cli.error("solve", *flags)
    with pytest.raises(ValueError) as error:
        zbsim.solve(p=4, m=8, tf=1, tb=1, tw=1, mem_limit=0.5)
    assert str(error.value) == message


@pytest.mark.parametrize("flags, keywords", [(["--node-limit", "0"], dict(node_limit=0)),
                                             (["--time-limit", "0"], dict(time_limit=0)),
                                             (["--threads", "0"], dict(threads=0))])
def test_solver_option_errors_are_the_clis(cli, flags, keywords):
    message = cli.error("solve", *SOLVE_FLAGS, *flags)
    with pytest.raises(ValueError) as error:
        zbsim.solve(**SOLVE_KW, **keywords)
    assert str(error.value) == message


def test_frontier_is_the_clis_json(cli):
    flags = ["--p", "4", "--m", "8", "--tf", "1", "--tb", "1", "--tw", "1", "--from", "1", "--to", "2"]
    expected = cli.json("frontier", *flags)
    curves = zbsim.frontier(from_=1, to=2, p=4, m=8, tf=1, tb=1, tw=1)
    assert curves == expected
    assert [c["placement"] for c in curves["curves"]] == ["linear", "vshape"]
    assert len(curves["curves"][0]["frontier"]) == 9
    only_v = zbsim.frontier(from_=1, to=2, placements=["vshape"], p=4, m=8, tf=1, tb=1, tw=1)
    assert only_v["curves"] == expected["curves"][1:]


@pytest.mark.parametrize("flags, keywords", [(["--from", "0"], dict(from_=0)),
                                             (["--placements", "diagonal"], dict(placements=["diagonal"])),
                                             (["--ilp", "--time-limit", "0"], dict(ilp=True, time_limit=0))])
def test_frontier_errors_are_the_clis(cli, flags, keywords):
    message = cli.error("frontier", "--p", "4", "--m", "8", "--tf", "1", "--tb", "1", "--tw", "1", *flags)
    with pytest.raises(ValueError) as error:
        zbsim.frontier(p=4, m=8, tf=1, tb=1, tw=1, **keywords)
    assert str(error.value) == message
