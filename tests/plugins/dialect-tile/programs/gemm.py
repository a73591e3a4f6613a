# Tiled GEMM C = A @ B in f16 with an f32 accumulator over the K loop, on a 2 x 2 core grid; the second
# kernel accumulates with `acc += matmul(a, b)`.
from htp.dialects.tile import kernel, Tensor, In, Out, f16, f32, load, store, matmul, cast, full

M, N, K = 128, 128, 256
BM, BN, BK = 32, 32, 64


@kernel(mapping=[2, 2])
def gemm(a: In[Tensor[M, K, f16]], b: In[Tensor[K, N, f16]], c: Out[Tensor[M, N, f16]]):
    for i in range(M // BM):
        for j in range(N // BN):
            acc = full((BM, BN), 0.0)
            for k in range(K // BK):
                ta = load(a.tile(i, k, shape=(BM, BK)))
                tb = load(b.tile(k, j, shape=(BK, BN)))
                acc = matmul(ta, tb, acc)
            store(c.tile(i, j, shape=(BM, BN)), cast(acc, f16))


@kernel
def gemm_aug(a: In[Tensor[BM, K, f16]], b: In[Tensor[K, BN, f32]] , c: Out[Tensor[BM, BN, f32]]):
    acc = full((BM, BN), 0.0, f32)
    for k in range(0, K, BK):
        ta = cast(load(a[:, k:k + BK]), f32)
        acc += matmul(ta, load(b[k:k + BK, :]))
    store(c, acc)
