"""Tiled GEMM C = A @ B on the cube cores: a 4 x 4 grid of 64 x 64 output tiles, K in steps of 64."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul, full
from htp.dialects.wsp import workload, P

M = N = K = 256
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
