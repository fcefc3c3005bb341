# recommend(): the object `zbsim recommend --format json` prints, on the tiny model of the C++
# search tests (8 layers, 3 GB GPUs), where the search takes a second.
import pytest

import zbsim

DATA = "tests/app/plan/data/"


def flags_and_keywords(source_dir, gpus=8, global_batch=16):
    data = source_dir / DATA
    flags = ["--model", str(data / "tiny-llama.json"), "--cluster", str(data / "16x4-ib200.json"),
             "--hardware", str(data / "small-gpu.json"), "--gpus", str(gpus), "--global-batch", str(global_batch),
             "--no-simgrid", "--jobs", "2"]
    keywords = dict(model=str(data / "tiny-llama.json"), cluster=str(data / "16x4-ib200.json"),
                    hardware=str(data / "small-gpu.json"), gpus=gpus, global_batch=global_batch, simgrid=False,
                    jobs=2)
    return flags, keywords


def test_recommend_returns_the_cli_json(cli, source_dir):
    flags, keywords = flags_and_keywords(source_dir)
    expected = cli.json("recommend", *flags)
    got = zbsim.recommend(**keywords)
    assert got == expected
    assert list(got) == list(expected)
    assert [list(row) for row in got["top"]] == [list(row) for row in expected["top"]]  # same keys, same order
    assert len(got["top"]) == 10 and "loses_because" not in got["top"][0]
    best = got["top"][0]
    assert best["pp"] * best["tp"] * best["dp"] == 8
    assert best["m"] * best["microbatch_size"] * best["dp"] == 16
    assert got["search"]["evaluated"] < got["search"]["candidates"]


def test_recommend_top_and_errors_are_the_clis(cli, source_dir):
    flags, keywords = flags_and_keywords(source_dir)
    assert len(zbsim.recommend(**keywords, top=3)["top"]) == 3
    # 64 GPUs and 8 layers of tensor degree at most 4: dp >= 2, which 3 sequences cannot split into.
    flags, keywords = flags_and_keywords(source_dir, gpus=64, global_batch=3)
    message = cli.error("recommend", *flags)
    with pytest.raises(ValueError) as error:
        zbsim.recommend(**keywords)
    assert str(error.value) == message
    with pytest.raises(ValueError, match="top: 0"):
        zbsim.recommend(**flags_and_keywords(source_dir)[1], top=0)
