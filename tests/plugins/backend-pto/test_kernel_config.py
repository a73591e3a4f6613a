"""Every golden kernel_config.py executes as Python and has the fields pto-runtime's tools read."""
import json
import pathlib

import pytest

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "kernel_config.py").exists())


def load(case):
    scope = {}
    exec(compile((GOLDEN / case / "kernel_config.py").read_text(), str(GOLDEN / case / "kernel_config.py"), "exec"), scope)
    return scope


def test_every_golden_package_has_a_kernel_config():
    assert len(CASES) >= 7, CASES


@pytest.mark.parametrize("case", CASES)
def test_orchestration_fields(case):
    cfg = load(case)
    orch = cfg["ORCHESTRATION"]
    assert orch["function_name"] == "aicpu_orchestration_entry"
    assert orch["source"].startswith("kernels/orchestration/") and orch["source"].endswith(".cpp")
    assert (GOLDEN / case / orch["source"]).exists()
    assert all(d in ("IN", "OUT", "INOUT") for d in orch["signature"])


@pytest.mark.parametrize("case", CASES)
def test_kernels_fields_match_registry(case):
    cfg = load(case)
    registry = json.loads((GOLDEN / case / "kernel_registry.json").read_text())
    assert [k["func_id"] for k in cfg["KERNELS"]] == list(range(len(cfg["KERNELS"])))
    for k, r in zip(cfg["KERNELS"], registry["kernels"]):
        assert k["core_type"] in ("aiv", "aic")
        assert k["source"] == f"kernels/{k['core_type']}/{k['name']}.cpp"
        assert (GOLDEN / case / k["source"]).exists()
        assert [d.lower() for d in k["signature"]] == r["signature"]
        assert k["func_id"] == r["func_id"] and k["name"] == r["name"]


@pytest.mark.parametrize("case", CASES)
def test_runtime_config(case):
    cfg = load(case)
    assert cfg["RUNTIME_CONFIG"]["runtime"] == "tensormap_and_ringbuffer"
    assert isinstance(cfg["RUNTIME_CONFIG"]["aicpu_thread_num"], int)
    assert cfg["ENTRIES"][next(iter(cfg["ENTRIES"]))] == cfg["ORCHESTRATION"]
