"""A kernel as its own entry point: C = A @ B in f16 on the cube core with an f32 accumulator over the K
loop, converted to f16 as it is stored (the tile dialect's own GEMM example)."""
from htp.dialects.tile import kernel, Tensor, In, Out, f16, load, store, matmul, cast, full

M, N, K = 128, 128, 256
BM, BN, BK = 32, 32, 64


@kernel
def gemm(a: In[Tensor[M, K, f16]], b: In[Tensor[K, N, f16]], c: Out[Tensor[M, N, f16]]):
    for i in range(M // BM):
        for j in range(N // BN):
            acc = full((BM, BN), 0.0)
            for k in range(K // BK):
                ta = load(a.tile(i, k, shape=(BM, BK)))
                tb = load(b.tile(k, j, shape=(BK, BN)))
                acc = matmul(ta, tb, acc)
            store(c.tile(i, j, shape=(BM, BN)), cast(acc, f16))
