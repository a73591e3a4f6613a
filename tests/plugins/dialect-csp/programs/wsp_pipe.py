"""A WSP workload whose `with P.pipe():` scope is a CSP network: load -> compute -> store over depth-2
channels (Y = exp(X) + 1, 32 rows per item). The same network as pipeline.py, written with kernels."""
from htp.dialects.csp import Channel, consume, recv, send
from htp.dialects.tile import In, Out, Tensor, adds, exp, f32, kernel, load, store
from htp.dialects.wsp import P, workload

ROWS = 32
ITEMS = 8


@kernel
def load_rows(x: In[Tensor[ROWS, 128, f32]], item: Out[Tensor[ROWS, 128, f32]]):
    store(item, load(x))


@kernel
def exp_plus_one(item: In[Tensor[ROWS, 128, f32]], out: Out[Tensor[ROWS, 128, f32]]):
    store(out, adds(exp(load(item)), 1.0))


@kernel
def store_rows(item: In[Tensor[ROWS, 128, f32]], y: Out[Tensor[ROWS, 128, f32]]):
    store(y, load(item))


@workload
def pipeline(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    loaded = Channel[Tensor[ROWS, 128, f32]](depth=2)
    computed = Channel[Tensor[ROWS, 128, f32]](depth=2)
    with P.pipe():
        for i in P.seq(ITEMS):
            send(loaded, load_rows[i](X.tile(i, 0)))
        with consume(loaded) as t:
            send(computed, exp_plus_one(t))
        for i in P.seq(ITEMS):
            store_rows[i](recv(computed), Y.tile(i, 0))
