"""A simulated run stops at its time limit (`options={"timeout_s": N}`, docs/packages.md) wherever it spends
the time: in a kernel's loop to a runtime bound of 10**12, or in a workload's loop of 10**12 launches. A kernel
call that looped for hours could not be stopped before (aie-sim checked its limit only between steps, and
pto-sim had no limit at all): the run hung. Both targets, the same way."""
from __future__ import annotations

import numpy as np
import pytest

import htp
from htp.dialects.tile import In, InOut, Out, Scalar, Tensor, adds, f32, i64, kernel, load, store
from htp.dialects.wsp import P, workload

TARGETS = ["pto-a2a3sim", "aie-npu1"]


@kernel
def spin(X: In[Tensor[16, 64, f32]], Y: Out[Tensor[16, 64, f32]], n: Scalar[i64]):
    t = load(X[0:16, :])
    for i in range(n):
        t = adds(t, 1.0)
    store(Y[0:16, :], t)


@kernel
def bump(X: InOut[Tensor[16, 64, f32]]):
    store(X, adds(load(X), 1.0))


@workload
def many(X: InOut[Tensor[16, 64, f32]], n: Scalar[i64]):
    for i in P.seq(n):
        bump[i](X)


def bound(tmp_path, fn, target):
    ctx = htp.Context()
    return htp.bind(ctx.compile(fn, target, tmp_path / target), ctx)


@pytest.mark.parametrize("target", TARGETS)
def test_a_kernel_looping_past_the_time_limit_stops_with_a_run_error(tmp_path, target):
    b = bound(tmp_path, spin, target)
    x = np.zeros((16, 64), np.float32)
    np.testing.assert_array_equal(np.asarray(b.run(X=x, n=7)["Y"]), x + 7)  # the limit leaves a short run alone
    with pytest.raises(htp.RunError) as e:
        b.run(X=x, n=10**12, options={"timeout_s": 1})
    assert "the run passed its time limit of 1 s (--option timeout_s)" in str(e.value)
    assert "spin" in str(e.value)  # where it stopped: the kernel


@pytest.mark.parametrize("target", TARGETS)
def test_a_workload_launching_past_the_time_limit_stops_with_a_run_error(tmp_path, target):
    b = bound(tmp_path, many, target)
    x = np.zeros((16, 64), np.float32)
    np.testing.assert_array_equal(np.asarray(b.run(X=x.copy(), n=3)["X"]), x + 3)
    with pytest.raises(htp.RunError) as e:
        b.run(X=x, n=10**12, options={"timeout_s": 1})
    assert "the run passed its time limit of 1 s (--option timeout_s)" in str(e.value)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("value", [-1, "abc"])
def test_a_time_limit_that_is_not_a_number_of_seconds_is_refused(tmp_path, target, value):
    b = bound(tmp_path, spin, target)
    with pytest.raises(htp.RunError) as e:
        b.run(X=np.zeros((16, 64), np.float32), n=1, options={"timeout_s": value})
    assert "option timeout_s must be a number of seconds >= 0 (0: no limit)" in str(e.value)
