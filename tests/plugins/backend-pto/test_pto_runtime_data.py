"""Runtime data on pto-a2a3sim (issue: hostile inputs): CSR row pointers and indices, ragged lengths are
checked where the generated orchestration reads them. A value that would read or expand outside a tensor
stops the run with an error naming the construct's source line, the tensor, the index and the value — never
a crash, never a silently wrong result. Valid data still matches NumPy. Needs HTP_PLUGIN_DIR (set by ctest)."""
import importlib.util
import os
import pathlib

import numpy as np
import pytest

import htp

PROGRAMS = pathlib.Path(__file__).parent / "programs"
RNG = np.random.default_rng(11)


def package(ctx, tmp_path_factory, program, entries):
    spec = importlib.util.spec_from_file_location(program, PROGRAMS / f"{program}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp(program) / "pkg"
    return ctx.compile([getattr(module, n) for n in entries], target="pto-a2a3sim", out=str(out))


@pytest.fixture(scope="module")
def moe(ctx, tmp_path_factory):
    return package(ctx, tmp_path_factory, "moe", ["moe", "moe_schedule"])


@pytest.fixture(scope="module")
def ragged(ctx, tmp_path_factory):
    return package(ctx, tmp_path_factory, "ragged_decode", ["ragged_decode", "ragged_decode_schedule"])


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def moe_inputs(indptr, indices):
    return dict(X=f32(6, 64), W=f32(8, 64), Y=f32(6, 64), indptr=np.array(indptr, dtype=np.int32),
                indices=np.array(indices, dtype=np.int32))


def run_error(ctx, cache, pkg, tmp_path, **inputs) -> str:
    with pytest.raises(Exception) as e:
        htp.bind(pkg, ctx).run(cache_dir=cache, run_dir=tmp_path / "run", **inputs)
    return str(e.value)


VALID_INDICES = [0, 3, 7, 1, 2, 5, 4, 6, 0]


@pytest.mark.parametrize("indptr,bad", [
    ([0, 2, 2, 3, -5, 7, 9], "indptr[3] = 3, indptr[4] = -5 (need 0 <= 3 <= -5 <= 9"),
    ([0, 2, 4, 3, 6, 7, 9], "indptr[2] = 4, indptr[3] = 3 (need 0 <= 4 <= 3 <= 9"),
    ([0, 2, 2, 3, 6, 7, 12], "indptr[5] = 7, indptr[6] = 12 (need 0 <= 7 <= 12 <= 9"),
    ([-1, 2, 2, 3, 6, 7, 9], "indptr[0] = -1, indptr[1] = 2 (need 0 <= -1 <= 2 <= 9"),
], ids=["negative", "decreasing", "past-the-indices", "negative-first"])
def test_a_bad_csr_row_pointer_is_a_run_error_naming_the_row(ctx, cache, moe, tmp_path, indptr, bad):
    msg = run_error(ctx, cache, moe, tmp_path, **moe_inputs(indptr, VALID_INDICES))
    assert "moe.py:" in msg and "runtime data: 'indptr' is not a CSR row pointer: " + bad in msg, msg


def test_an_index_outside_the_selected_tensor_is_a_run_error(ctx, cache, moe, tmp_path):
    msg = run_error(ctx, cache, moe, tmp_path, **moe_inputs([0, 2, 2, 3, 6, 7, 9], [0, 3, 7, 1, 2, 5, 4, 6, 99]))
    assert "out of range" in msg or "outside" in msg, msg


def test_valid_csr_data_still_matches_numpy(ctx, cache, moe, tmp_path):
    inputs = moe_inputs([0, 2, 2, 3, 6, 7, 9], VALID_INDICES)
    r = htp.bind(moe, ctx).run(cache_dir=cache, run_dir=tmp_path / "run", **{k: v.copy() for k, v in inputs.items()})
    want = inputs["Y"].copy()
    for t in range(6):
        for e in inputs["indices"][inputs["indptr"][t]:inputs["indptr"][t + 1]]:
            want[t] += np.maximum(inputs["X"][t] * inputs["W"][e], 0)
    np.testing.assert_allclose(r["Y"], want, rtol=1e-5, atol=1e-5)


def ragged_inputs(blocks):
    q, k, v = f32(4, 64) * 0.1, f32(96, 64) * 0.1, f32(96, 64)
    return dict(QT=np.ascontiguousarray(q.T), K=k, V=v, O=f32(4, 64), starts=np.array([0, 48, 64, 64], dtype=np.int32),
                blocks=np.array(blocks, dtype=np.int32))


def test_a_negative_ragged_length_is_a_run_error_not_an_empty_row(ctx, cache, ragged, tmp_path):
    msg = run_error(ctx, cache, ragged, tmp_path, **ragged_inputs([3, -2, 0, 2]))
    assert "ragged_decode.py:27:" in msg and "runtime data: blocks[1] = -2 is a negative ragged length" in msg, msg


def test_a_ragged_length_past_the_tensor_is_a_run_error(ctx, cache, ragged, tmp_path):
    msg = run_error(ctx, cache, ragged, tmp_path, **ragged_inputs([3, 1, 0, 40]))
    assert "out of range" in msg or "outside" in msg, msg
