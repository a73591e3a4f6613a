"""Pipes whose stage names its consume item more than once in an iteration: passed twice to one launch
(`add2(t, t)`), and passed to two launches. The item is received once per iteration (docs/dialects/wsp.md:
"a consume item t as a launch argument: the received item")."""
from htp.dialects.csp import Channel, consume, recv, send
from htp.dialects.tile import In, Out, Tensor, add, f32, kernel, load, mul, store
from htp.dialects.wsp import P, workload

R, C, N = 16, 64, 4


@kernel
def ld(x: In[Tensor[R, C, f32]], item: Out[Tensor[R, C, f32]]):
    store(item, load(x))


@kernel
def add2(a: In[Tensor[R, C, f32]], b: In[Tensor[R, C, f32]], out: Out[Tensor[R, C, f32]]):
    store(out, add(load(a), load(b)))


@kernel
def square(a: In[Tensor[R, C, f32]], out: Out[Tensor[R, C, f32]]):
    x = load(a)
    store(out, mul(x, x))


@kernel
def st(item: In[Tensor[R, C, f32]], y: Out[Tensor[R, C, f32]]):
    store(y, load(item))


@workload
def doubled(X: In[Tensor[R * N, C, f32]], Y: Out[Tensor[R * N, C, f32]]):
    a = Channel[Tensor[R, C, f32]](depth=2)
    b = Channel[Tensor[R, C, f32]](depth=2)
    with P.pipe():
        for i in P.seq(N):
            send(a, ld[i](X.tile(i, 0)))
        for t in consume(a):
            send(b, add2(t, t))
        for i in P.seq(N):
            st[i](recv(b), Y.tile(i, 0))


@workload
def fanned(X: In[Tensor[R * N, C, f32]], Y: Out[Tensor[R * N, C, f32]], Z: Out[Tensor[R * N, C, f32]]):
    a = Channel[Tensor[R, C, f32]](depth=2)
    b = Channel[Tensor[R, C, f32]](depth=2)
    c = Channel[Tensor[R, C, f32]](depth=2)
    with P.pipe():
        for i in P.seq(N):
            send(a, ld[i](X.tile(i, 0)))
        for t in consume(a):
            send(b, add2(t, t))
            send(c, square(t))
        for i in P.seq(N):
            st[i](recv(b), Y.tile(i, 0))
        for i in P.seq(N):
            st[i](recv(c), Z.tile(i, 0))
