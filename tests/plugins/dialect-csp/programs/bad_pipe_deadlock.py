"""A pipe whose two stages each wait to receive from the other before they send."""
from htp.dialects.csp import Channel, recv, send
from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, store
from htp.dialects.wsp import P, workload


@kernel
def ping(item: In[Tensor[32, 128, f32]], out: Out[Tensor[32, 128, f32]]):
    store(out, load(item))


@kernel
def pong(item: In[Tensor[32, 128, f32]], out: Out[Tensor[32, 128, f32]]):
    store(out, load(item))


@workload
def stuck(X: In[Tensor[256, 128, f32]]):
    a_to_b = Channel[Tensor[32, 128, f32]](depth=1)
    b_to_a = Channel[Tensor[32, 128, f32]](depth=1)
    with P.pipe():
        for i in P.seq(4):
            send(a_to_b, ping[i](recv(b_to_a)))
        for i in P.seq(4):
            send(b_to_a, pong[i](recv(a_to_b)))
