"""Workload tensor dimensions written as integer expressions of literals and captured constants
(`Tensor[2 * R, N, f32]`), as kernel dimensions already accept them: compiled and run on both simulator
targets against NumPy; an expression that is not positive is diagnosed at its span."""
import numpy as np
import pytest

import htp
from htp.dialects.tile import In, Out, Tensor, add, f32, kernel, load, store
from htp.dialects.wsp import P, workload

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_expression_dimensions_compile_and_run": [
        ("workload dimension as an expression", "pto-a2a3sim"), ("workload dimension as an expression", "aie-npu1")],
}

R, N = 16, 32


@kernel
def add_rows(x: In[Tensor[R, N, f32]], y: In[Tensor[R, N, f32]], z: Out[Tensor[R, N, f32]]):
    store(z, add(load(x), load(y)))


@workload
def twice(A: In[Tensor[2 * R, N, f32]], B: In[Tensor[R + R, N, f32]], C: Out[Tensor[(4 * R) // 2, N, f32]]):
    for i in P(2):
        add_rows[i](A.tile(i, 0), B.tile(i, 0), C.tile(i, 0))


@workload
def empty(A: In[Tensor[R - R, N, f32]], C: Out[Tensor[R, N, f32]]):
    for i in P(1):
        add_rows[i](A, A, C)


@pytest.fixture(scope="module")
def ctx():
    return htp.Context()


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_expression_dimensions_compile_and_run(ctx, tmp_path, target):
    pkg = ctx.compile(twice, target=target, out=tmp_path / "pkg")
    (entry,) = pkg.entrypoints
    assert [p["shape"] for p in entry["params"]] == [[2 * R, N]] * 3
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((2 * R, N), dtype=np.float32) for _ in range(2))
    r = htp.bind(pkg, ctx).run(A=a, B=b, cache_dir=tmp_path / "cache")
    np.testing.assert_array_equal(r["C"], a + b)


def test_a_dimension_that_is_not_positive_is_diagnosed_at_its_span(ctx, tmp_path):
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(empty, target="pto-a2a3sim", out=tmp_path / "pkg")
    d = e.value.errors[0]
    assert d.code == "wsp.type" and "a tensor dimension must be positive, got 0" in d.message
    with open(__file__, encoding="utf-8") as f:
        assert "R - R" in f.read().splitlines()[d.span["line"] - 1][d.span["col"]:]
