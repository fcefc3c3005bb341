# recommend(): the object `zbsim recommend --format json` prints, on the tiny model of the C++
# search tests (8 layers, 3 GB GPUs), where the search takes a second.
import json

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


def test_cost_model_roofline_ignores_the_presets_calibration(source_dir, tmp_path):
    # small-gpu.json with a calibration: the calibrated plans are slower; the roofline's are those of
    # the preset without one.
    flags, keywords = flags_and_keywords(source_dir)
    gpu = json.loads((source_dir / DATA / "small-gpu.json").read_text())
    gpu["calibration"] = {"gemm_sustained_fraction": 0.5, "memory_sustained_fraction": 0.6, "kernel_overhead_us": 10,
                          "collective_efficiency": 0.7, "attention_sustained_fraction": 0.4, "misaligned_gemm_fraction": 0.5,
                          "fitted_on": "a test",
                          "cross_validation": "none"}
    calibrated_gpu = tmp_path / "calibrated-gpu.json"
    calibrated_gpu.write_text(json.dumps(gpu))
    plain = zbsim.recommend(**keywords)
    keywords["hardware"] = str(calibrated_gpu)
    calibrated = zbsim.recommend(**keywords)
    roofline = zbsim.recommend(**keywords, cost_model="roofline")
    assert [row["step_time_s"] for row in roofline["top"]] == [row["step_time_s"] for row in plain["top"]]
    assert calibrated["top"][0]["step_time_s"] > 1.2 * plain["top"][0]["step_time_s"]
    with pytest.raises(ValueError, match="cost_model: .fitted."):
        zbsim.recommend(**keywords, cost_model="fitted")
