"""A pipe whose first stage sends 8 items but whose last stage receives 6."""
from htp.dialects.csp import Channel, recv, send
from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, store
from htp.dialects.wsp import P, workload


@kernel
def load_rows(x: In[Tensor[32, 128, f32]], item: Out[Tensor[32, 128, f32]]):
    store(item, load(x))


@kernel
def store_rows(item: In[Tensor[32, 128, f32]], y: Out[Tensor[32, 128, f32]]):
    store(y, load(item))


@workload
def short_read(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    rows = Channel[Tensor[32, 128, f32]](depth=2)
    with P.pipe():
        for i in P.seq(8):
            send(rows, load_rows[i](X.tile(i, 0)))
        for i in P.seq(6):
            store_rows[i](recv(rows), Y.tile(i, 0))
