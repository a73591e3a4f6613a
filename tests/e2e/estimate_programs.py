"""Programs whose estimated device time has a known shape (docs/packages.md, "Estimated device time"): a GEMM
tile at two K (its estimate doubles with K) and a memory-bound elementwise kernel at two tile heights (its
estimate follows the bytes it moves), for each simulator target. Shared by the e2e test
(test_estimated_device_time.py) and make bench (bench/examples/estimates.py)."""
import numpy as np

PTO_GEMM = """
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul, full
from htp.dialects.wsp import workload, P

M, N = 128, 64  # row blocks of C: disjoint address ranges, so the runtime sees independent tasks
K = {k}
T = 64


@kernel
def gemm_tile(a: In[Tensor[T, K, f32]], b: In[Tensor[K, T, f32]], c: Out[Tensor[T, T, f32]]):
    acc = full((T, T), 0.0)
    for k in range(K // T):
        acc = matmul(load(a[:, k * T:(k + 1) * T]), load(b[k * T:(k + 1) * T, :]), acc)
    store(c, acc)


@workload
def gemm(A: In[Tensor[M, K, f32]], B: In[Tensor[K, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i, j in P(M // T, N // T):
        gemm_tile[i, j](A[i * T:(i + 1) * T, :], B[:, j * T:(j + 1) * T], C.tile(i, j))
"""

AIE_GEMM = """
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul
from htp.dialects.layout import Layout

M, K, N = 64, {k}, 64


@kernel(mapping=[2, 1])
def gemm(A: In[Tensor[M, K, f32] @ Layout("S(0)R")],
         B: In[Tensor[K, N, f32] @ Layout("RS(1)")],
         C: Out[Tensor[M, N, f32] @ Layout("S(0)S(1)")]):
    store(C, matmul(load(A), load(B)))
"""

PTO_VADD = """
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.wsp import workload, P

TR = {rows}
M, N = 256, 512


@kernel
def add_tile(x: In[Tensor[TR, 128, f32]], y: In[Tensor[TR, 128, f32]], z: Out[Tensor[TR, 128, f32]]):
    store(z, add(load(x), load(y)))


@workload
def vadd(A: In[Tensor[M, N, f32]], B: In[Tensor[M, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i, j in P(M // TR, N // 128):
        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))
"""

AIE_VADD = """
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.wsp import workload, P

TM = {rows}
M, N = 8 * TM, 64


@kernel
def add_tile(x: In[Tensor[TM, N, f32]], y: In[Tensor[TM, N, f32]], z: Out[Tensor[TM, N, f32]]):
    store(z, add(load(x), load(y)))


@workload
def vadd(A: In[Tensor[M, N, f32]], B: In[Tensor[M, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i in P(4):
        for s in P.seq(2):
            add_tile(A.tile(i * 2 + s, 0), B.tile(i * 2 + s, 0), C.tile(i * 2 + s, 0))
"""

TARGETS = {"pto-a2a3sim": {"gemm": (PTO_GEMM, "gemm_tile", (512, 1024)), "vadd": (PTO_VADD, "add_tile", (32, 64))},
           "aie-npu1": {"gemm": (AIE_GEMM, "gemm", (16, 32)), "vadd": (AIE_VADD, "add_tile", (8, 16))}}  # 32 rows overflow a core's 64 KiB


def roofline_ns(report, kernel):
    """The roofline part (estimate minus launch) of `kernel`'s tasks, all equal."""
    launch = report["estimate"]["kernels"][kernel]["launch_ns"]
    values = {t["estimated_device_ns"] for t in report["task_estimates"] if t["kernel"] == kernel}
    assert len(values) == 1, values
    return values.pop() - launch


def zeros(*shape):
    return np.zeros(shape, np.float32)


def gemm_inputs(target, k):
    return dict(A=zeros(128 if target.startswith("pto") else 64, k), B=zeros(k, 64))


def vadd_inputs(target, rows):
    shape = (256, 512) if target.startswith("pto") else (8 * rows, 64)
    return dict(A=zeros(*shape), B=zeros(*shape))
