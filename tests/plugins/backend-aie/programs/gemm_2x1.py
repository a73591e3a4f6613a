"""Tiled GEMM on a [2, 1] core grid: C = A @ B with A @ S(0)R (row shards), B @ RS(1) (column shards)
and C @ S(0)S(1); each core multiplies its row block of A by its column block of B."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul
from htp.dialects.layout import Layout

M, K, N = 64, 32, 64


@kernel(mapping=[2, 1])
def gemm(A: In[Tensor[M, K, f32] @ Layout("S(0)R")],
         B: In[Tensor[K, N, f32] @ Layout("RS(1)")],
         C: Out[Tensor[M, N, f32] @ Layout("S(0)S(1)")]):
    store(C, matmul(load(A), load(B)))
