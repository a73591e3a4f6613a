"""Tensors in and out of htp.bind(pkg).run through DLPack: torch tensors (f32, f16, bf16, strided views) and
NumPy arrays on both simulator targets, zero-copy where the memory allows it, and argument errors that are
TypeError / ValueError naming the parameter and both sides."""
import numpy as np
import pytest

import htp
from htp.dialects.tile import In, Out, Tensor, add, bf16, f16, f32, kernel, load, store
from htp.dialects.wsp import P, workload

torch = pytest.importorskip("torch", reason="python3-torch is not installed (scripts/bootstrap.sh installs it)")

TARGETS = ["pto-a2a3sim", "aie-npu1"]


@kernel
def add_f32(x: In[Tensor[16, 32, f32]], y: In[Tensor[16, 32, f32]], z: Out[Tensor[16, 32, f32]]):
    store(z, add(load(x), load(y)))


@workload
def vadd_f32(A: In[Tensor[32, 32, f32]], B: In[Tensor[32, 32, f32]], C: Out[Tensor[32, 32, f32]]):
    for i in P(2):
        add_f32[i](A.tile(i, 0), B.tile(i, 0), C.tile(i, 0))


@kernel
def add_f16(x: In[Tensor[16, 32, f16]], y: In[Tensor[16, 32, f16]], z: Out[Tensor[16, 32, f16]]):
    store(z, add(load(x), load(y)))


@workload
def vadd_f16(A: In[Tensor[32, 32, f16]], B: In[Tensor[32, 32, f16]], C: Out[Tensor[32, 32, f16]]):
    for i in P(2):
        add_f16[i](A.tile(i, 0), B.tile(i, 0), C.tile(i, 0))


@kernel
def add_bf16(x: In[Tensor[16, 32, bf16]], y: In[Tensor[16, 32, bf16]], z: Out[Tensor[16, 32, bf16]]):
    store(z, add(load(x), load(y)))


@workload
def vadd_bf16(A: In[Tensor[32, 32, bf16]], B: In[Tensor[32, 32, bf16]], C: Out[Tensor[32, 32, bf16]]):
    for i in P(2):
        add_bf16[i](A.tile(i, 0), B.tile(i, 0), C.tile(i, 0))


WORKLOADS = {torch.float32: vadd_f32, torch.float16: vadd_f16, torch.bfloat16: vadd_bf16}


@pytest.fixture(scope="module")
def ctx():
    return htp.Context()


@pytest.fixture(scope="module")
def packages(ctx, tmp_path_factory):
    """(target, torch dtype) -> bound package, compiled once per module."""
    out = tmp_path_factory.mktemp("pkgs")
    return {(t, dt): htp.bind(ctx.compile(w, target=t, out=out / f"{w.__name__}-{t}"), ctx)
            for t in TARGETS for dt, w in WORKLOADS.items()}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def inputs(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(32, 32, generator=g).to(dtype), torch.randn(32, 32, generator=g).to(dtype)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=["f32", "f16", "bf16"])
def test_torch_in_torch_out_equals_torch(packages, cache, target, dtype):
    a, b = inputs(dtype)
    r = packages[target, dtype].run(A=a, B=b, cache_dir=cache)
    c = r["C"]
    assert isinstance(c, torch.Tensor) and c.dtype == dtype and c.shape == (32, 32)
    # Elementwise add in float rounded once to the element type: bit-equal to torch's own add.
    assert torch.equal(c, a + b)
    assert r.report["arguments"] == {"A": "caller memory (zero-copy)", "B": "caller memory (zero-copy)",
                                     "C": "allocated by the host"}


@pytest.mark.parametrize("target", TARGETS)
def test_output_tensor_is_written_in_place(packages, cache, target):
    a, b = inputs(torch.float32, seed=1)
    c = torch.full((32, 32), float("nan"))
    r = packages[target, torch.float32].run(A=a, B=b, C=c, cache_dir=cache)
    assert r["C"] is c and r["C"].data_ptr() == c.data_ptr()
    assert torch.equal(c, a + b)
    assert r.report["arguments"]["C"] == "caller memory (zero-copy)"


def test_strided_views_are_copied_in_and_back(packages, cache):
    a, b = inputs(torch.float32, seed=2)
    a_t = a.t().contiguous().t()  # same values, column-major strides
    big = torch.zeros(32, 64)
    c_view = big[:, ::2]          # every other column of a larger tensor
    assert not a_t.is_contiguous() and not c_view.is_contiguous()
    r = packages["pto-a2a3sim", torch.float32].run(A=a_t, B=b, C=c_view, cache_dir=cache)
    assert r["C"] is c_view
    assert torch.equal(c_view, a + b)
    assert torch.count_nonzero(big[:, 1::2]) == 0, "the columns between the view's were written"
    assert r.report["arguments"] == {"A": "host copy", "B": "caller memory (zero-copy)", "C": "host copy"}


@pytest.mark.parametrize("target", TARGETS)
def test_numpy_in_numpy_out(packages, cache, target):
    a, b = (t.numpy() for t in inputs(torch.float32, seed=3))
    r = packages[target, torch.float32].run(A=a, B=b, cache_dir=cache)
    assert isinstance(r["C"], np.ndarray)
    np.testing.assert_array_equal(r["C"], a + b)


def test_read_only_numpy_input_is_accepted(packages, cache):
    a, b = (t.numpy() for t in inputs(torch.float32, seed=4))
    a.flags.writeable = False
    r = packages["pto-a2a3sim", torch.float32].run(A=a, B=b, cache_dir=cache)
    np.testing.assert_array_equal(r["C"], a + b)


def test_dlpack_capsule_is_accepted(packages, cache):
    a, b = inputs(torch.float32, seed=5)
    r = packages["pto-a2a3sim", torch.float32].run(A=torch.utils.dlpack.to_dlpack(a), B=b, cache_dir=cache)
    assert torch.equal(r["C"], a + b)


def test_wrong_dtype_is_a_type_error_naming_both_sides(packages, cache):
    a, b = inputs(torch.float32)
    with pytest.raises(TypeError, match=r"argument 'A' is f64\[32, 32\], but the entry expects in f32\[32, 32\]") as e:
        packages["pto-a2a3sim", torch.float32].run(A=a.double(), B=b, cache_dir=cache)
    assert isinstance(e.value, htp.RunError)
    assert [d.code for d in e.value.diagnostics] == ["run.argument.dtype"]


def test_wrong_shape_is_a_value_error_naming_both_sides(packages, cache):
    a, b = inputs(torch.float32)
    with pytest.raises(ValueError, match=r"argument 'B' is f32\[16, 32\], but the entry expects in f32\[32, 32\]"):
        packages["pto-a2a3sim", torch.float32].run(A=a, B=b[:16], cache_dir=cache)


class DeviceTensor:
    """A DLPack producer on a device HTP cannot read (what a CUDA tensor reports)."""

    def __dlpack_device__(self):
        return (2, 1)  # kDLCUDA, device 1

    def __dlpack__(self, stream=None):
        raise AssertionError("a tensor on another device must be rejected before it is exported")


def test_tensor_on_another_device_names_the_device(packages, cache):
    a, b = inputs(torch.float32)
    with pytest.raises(ValueError, match=r"argument 'A' is on device cuda:1"):
        packages["pto-a2a3sim", torch.float32].run(A=DeviceTensor(), B=b, cache_dir=cache)


def test_tensor_on_another_device_is_an_argument_value_error(packages, cache):
    a, b = inputs(torch.float32)
    with pytest.raises(htp.ArgumentValueError, match=r"argument 'A' is on device cuda:1"):
        packages["pto-a2a3sim", torch.float32].run(A=DeviceTensor(), B=b, cache_dir=cache)


# Tensors torch refuses to export raised torch's own exception, naming no argument; now an
# htp.ArgumentValueError naming the argument and quoting torch.
def test_a_tensor_torch_cannot_export_is_named(packages, cache):
    a, b = inputs(torch.float32)
    run = packages["pto-a2a3sim", torch.float32].run
    with pytest.raises(htp.ArgumentValueError, match=r"argument 'A' cannot be passed through DLPack: .*require"):
        run(A=a.clone().requires_grad_(True), B=b, cache_dir=cache)
    with pytest.raises(htp.ArgumentValueError, match=r"argument 'B' cannot be passed through DLPack: .*meta"):
        run(A=a, B=torch.empty(32, 32, device="meta"), cache_dir=cache)


# An output whose elements share memory (torch's expand: stride 0) was accepted and every element of the
# caller's tensor ended up holding the last value written.
def test_an_output_whose_elements_share_memory_is_refused(packages, cache):
    a, b = inputs(torch.float32)
    with pytest.raises(htp.ArgumentValueError, match=r"argument 'C' has elements that share memory .* \(Out\)"):
        packages["pto-a2a3sim", torch.float32].run(A=a, B=b, C=torch.zeros(32, 1).expand(32, 32), cache_dir=cache)
    c = torch.zeros(32, 64)[:, ::2]  # strided, not overlapping: written in place through a copy
    packages["pto-a2a3sim", torch.float32].run(A=a, B=b, C=c, cache_dir=cache)
    torch.testing.assert_close(c, a + b)


def test_non_tensor_argument_is_a_type_error(packages, cache):
    a, b = inputs(torch.float32)
    with pytest.raises(TypeError, match=r"argument 'A' is a object, not a tensor"):
        packages["pto-a2a3sim", torch.float32].run(A=object(), B=b, cache_dir=cache)
    # A string is an array of characters to NumPy, which DLPack cannot carry: the same error, not NumPy's.
    with pytest.raises(TypeError, match=r"argument 'A' is a str, not a tensor"):
        packages["pto-a2a3sim", torch.float32].run(A="hello", B=b, cache_dir=cache)
