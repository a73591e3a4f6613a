"""Operands that live column-major in core memory (the layouts' memory facet, written as local `m` iters
with strides [1, rows]): the DMAs transpose them on the way in and out — a mem tile's dimensionsToStream
for distributed shards, a core's for joined outputs, the shim's dma_memcpy_nd pattern where the shim feeds
or drains the cores directly — and the kernels read the objects with those strides."""
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, matmul, add
from htp.dialects.layout import Layout

M, K, N = 64, 32, 64


@kernel(mapping=[2, 2])
def gemm_t(A: In[Tensor[M, K, f32] @ Layout("S(0)R")],
           B: In[Tensor[K, N, f32] @ Layout.axe(shard=[(K, 1, "m"), (2, 1, "mesh.y"), (N // 2, K, "m")],
                                                replica=[(2, 1, "mesh.x")])],
           C: Out[Tensor[M, N, f32] @ Layout.axe(shard=[(2, 1, "mesh.x"), (M // 2, 1, "m"),
                                                       (2, 1, "mesh.y"), (N // 2, M // 2, "m")])]):
    store(C, matmul(load(A), load(B)))


@kernel(mapping=[2, 1])
def gemm_b(A: In[Tensor[M, K, f32] @ Layout("S(0)R")],
           B: In[Tensor[K, N, f32] @ Layout.axe(shard=[(K, 1, "m"), (N, K, "m")],
                                                replica=[(2, 1, "mesh.x"), (1, 1, "mesh.y")])],
           C: Out[Tensor[M, N, f32] @ Layout("S(0)R")]):
    store(C, matmul(load(A), load(B)))


@kernel
def add_t(X: In[Tensor[K, N, f32]],
          Y: In[Tensor[K, N, f32]],
          Z: Out[Tensor[K, N, f32] @ Layout.axe(shard=[(K, 1, "m"), (N, K, "m")])]):
    store(Z, add(load(X), load(Y)))
