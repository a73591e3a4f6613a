"""Groups and blocks: combine (unordered), sequential (ordered), P.pipe, intermediates, scalar lets,
range loops and kernel keyword arguments."""
from htp.dialects.tile import kernel, Tensor, Scalar, In, Out, InOut, f32, i64, load, store, add
from htp.dialects.wsp import workload, P, DenseDyn, Dense, combine, sequential


@kernel
def produce(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, load(x))


@kernel
def consume(x: In[Tensor[16, 64, f32]], acc: InOut[Tensor[16, 64, f32]], step: Scalar[i64]):
    store(acc, add(load(acc), load(x)))


@workload
def staged(A: In[Tensor[64, 64, f32]], C: InOut[Tensor[16, 64, f32]], n: int):
    buf: Tensor[64, 64, f32]
    half = n // 2
    for i, j in P(Dense[4], DenseDyn(n)):
        combine(produce[i, j](A.tile(i, 0), buf.tile(i, 0)), consume[i, j](buf.tile(i, 0), C, j))
    with sequential():
        for k in range(half):
            consume[k](buf[k * 16:k * 16 + 16, :], C, step=k + 1)
    with P.pipe():
        for k in P.seq(4):
            produce[k](A.tile(k, 0), buf.tile(k, 0))
            consume[k](acc=C, x=buf.tile(k, 0), step=max(k, half))
