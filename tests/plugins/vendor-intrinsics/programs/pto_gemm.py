"""Tiled GEMM C = A @ B spelled with the pto intrinsic set: pto.matmul runs on the cube (AIC) cores."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32
from htp.dialects.wsp import workload, P
from htp.intrinsics import pto

M = N = K = 128
T = 64


@kernel
def gemm_tile(a: In[Tensor[T, K, f32]], b: In[Tensor[K, T, f32]], c: Out[Tensor[T, T, f32]]):
    acc = pto.full((T, T), 0.0)
    for k in range(K // T):
        acc = pto.matmul(pto.load(a[:, k * T:(k + 1) * T]), pto.load(b[k * T:(k + 1) * T, :]), acc)
    pto.store(c, acc)


@workload
def gemm(A: In[Tensor[M, K, f32]], B: In[Tensor[K, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i, j in P(M // T, N // T):
        gemm_tile[i, j](A[i * T:(i + 1) * T, :], B[:, j * T:(j + 1) * T], C.tile(i, j))
