"""The estimated device time (docs/packages.md, "Estimated device time") on the simulators of both
targets, through htp-host compile + run: a GEMM tile's estimate doubles with its K, a memory-bound
elementwise kernel's follows the bytes it moves, and report.json and trace.json carry the estimate,
labelled as one. The model is affine (launch + max(compute, memory)), so the doubling is checked on the
roofline part (estimate minus the profile's fixed launch cost). Needs HTP_HOST and HTP_PLUGIN_DIR."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

from estimate_programs import TARGETS, gemm_inputs, roofline_ns, vadd_inputs

HOST = [os.environ["HTP_HOST"], "--plugins", os.environ["HTP_PLUGIN_DIR"]]
TOLERANCE = 0.02


def htp(*args):
    r = subprocess.run(HOST + [str(a) for a in args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def run(tmp, target, source, **inputs):
    """Compiles `source` for `target`, runs it on the simulator; returns (report, trace)."""
    tmp.mkdir(parents=True)
    prog = tmp / "prog.py"
    prog.write_text(source)
    htp("compile", prog, "--target", target, "-o", tmp / "pkg")
    args = ["run", tmp / "pkg", "--outputs", tmp / "out", "--cache", tmp.parent / "cache", "--run-dir", tmp / "run"]
    for name, array in inputs.items():
        np.save(tmp / f"{name}.npy", array)
        args += ["--inputs", f"{name}={tmp / (name + '.npy')}"]
    htp(*args)
    report = json.loads((tmp / "run" / "report.json").read_text())
    trace = json.loads((tmp / "run" / "trace.json").read_text())
    return report, trace


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_doubling_the_k_of_a_gemm_tile_doubles_its_estimate(tmp_path, target):
    source, kernel, (k1, k2) = TARGETS[target]["gemm"]
    one, _ = run(tmp_path / "k1", target, source.format(k=k1), **gemm_inputs(target, k1))
    two, _ = run(tmp_path / "k2", target, source.format(k=k2), **gemm_inputs(target, k2))
    assert roofline_ns(two, kernel) == pytest.approx(2 * roofline_ns(one, kernel), rel=TOLERANCE)
    assert one["estimate"]["kernels"][kernel]["work"]["matmul_flops"] * 2 == \
        two["estimate"]["kernels"][kernel]["work"]["matmul_flops"]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_memory_bound_elementwise_estimate_follows_bytes_moved(tmp_path, target):
    source, kernel, (r1, r2) = TARGETS[target]["vadd"]
    one, _ = run(tmp_path / "r1", target, source.format(rows=r1), **vadd_inputs(target, r1))
    two, _ = run(tmp_path / "r2", target, source.format(rows=r2), **vadd_inputs(target, r2))
    k1, k2 = one["estimate"]["kernels"][kernel], two["estimate"]["kernels"][kernel]
    assert k1["bound"] == "memory" and k2["bound"] == "memory"
    assert k2["work"]["bytes_loaded"] == 2 * k1["work"]["bytes_loaded"]
    assert roofline_ns(two, kernel) == pytest.approx(2 * roofline_ns(one, kernel), rel=TOLERANCE)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_report_and_trace_carry_the_estimate(tmp_path, target):
    source, kernel, (k1, _) = TARGETS[target]["gemm"]
    report, trace = run(tmp_path / "r", target, source.format(k=k1), **gemm_inputs(target, k1))
    est = report["estimate"]
    assert est["available"] is True and est["kind"] == "estimate"
    assert "estimated device time (model)" in est["label"] and "not a measurement" in est["label"]
    tasks = report["task_estimates"]
    assert tasks and all(t["estimated_device_ns"] > 0 for t in tasks)
    assert est["tasks"] == len(tasks)
    assert est["total_ns"] == pytest.approx(sum(t["estimated_device_ns"] for t in tasks))
    # The GEMM's tiles are independent: the critical path is one tile.
    assert est["critical_path_ns"] == pytest.approx(max(t["estimated_device_ns"] for t in tasks))
    assert est["critical_path_tasks"] == 1
    numbers = est["profile_numbers"]
    assert numbers and all(n["source"] for n in numbers.values() if "source" in n)
    events = trace["traceEvents"]
    [process] = [e for e in events if e.get("name") == "process_name" and
                 e["args"]["name"] == "estimated device time (model)"]
    modelled = [e for e in events if e.get("cat") == "estimate" and e["pid"] == process["pid"]]
    assert len(modelled) == len(tasks)
    assert all(e["args"]["estimate"] is True and e["name"] == kernel for e in modelled)
    # The estimate's track is separate from the simulator's measured timeline.
    assert any(e.get("ph") == "X" and e.get("cat") != "estimate" for e in events)
