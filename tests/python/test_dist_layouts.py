"""backend-pto lowers the dist facet (issue 17): a kernel mapped over a core mesh whose tensors carry dist
layouts runs as one task per core coordinate on its shard of each tensor — the same program that backend-aie
maps onto a grid of compute cores. Checked against NumPy on both simulators, with the visible effect: the
orchestration's mesh loops and shard views, and the number of tasks."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import htp

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

import gemm_layouts  # noqa: E402

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_the_spmd_gemm_with_layouts_runs_on_both_targets": [
        ("layout `dist` facet (sharding over cores)", "pto-a2a3sim"), ("layout `dist` facet (sharding over cores)", "aie-npu1")],
}


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_the_spmd_gemm_with_layouts_runs_on_both_targets(tmp_path, target):
    ctx = htp.Context()
    pkg = ctx.compile(gemm_layouts.gemm_spmd, target, tmp_path / "pkg")
    inputs = gemm_layouts.make_inputs(np.random.default_rng(4))
    result = htp.bind(pkg, ctx).run(**inputs)
    np.testing.assert_allclose(result["C"], inputs["A"] @ inputs["B"], rtol=1e-4, atol=1e-3)


def test_pto_runs_one_task_per_core_coordinate_on_the_shards(tmp_path):
    ctx = htp.Context()
    pkg = ctx.compile(gemm_layouts.gemm_spmd, "pto-a2a3sim", tmp_path / "pkg")
    [entry] = pkg.entrypoints
    assert [p["shape"] for p in entry["params"]] == [[64, 128], [128, 64], [64, 64]], "the entry takes whole tensors"
    orchestration = (pkg.path / "codegen/pto/kernels/orchestration/gemm_spmd.cpp").read_text()
    assert "for (int64_t v_mesh0 = 0; v_mesh0 < 2; ++v_mesh0)" in orchestration
    assert "for (int64_t v_mesh1 = 0; v_mesh1 < 2; ++v_mesh1)" in orchestration
    # A @ S(0)R: rows by mesh axis 0, whole K; B @ RS(1): columns by axis 1; C @ S(0)S(1): both.
    assert "task0_A_offset[2] = {static_cast<uint32_t>(v_mesh0 * 32), static_cast<uint32_t>(0)}" in orchestration
    assert "task0_B_offset[2] = {static_cast<uint32_t>(0), static_cast<uint32_t>(v_mesh1 * 32)}" in orchestration
    assert "task0_C_offset[2] = {static_cast<uint32_t>(v_mesh0 * 32), static_cast<uint32_t>(v_mesh1 * 32)}" in orchestration
    inputs = gemm_layouts.make_inputs(np.random.default_rng(5))
    report = htp.bind(pkg, ctx).run(**inputs).report
    assert report["tasks"] == 4
