"""Bad: the storer receives from `raw`, which it does not declare."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, exp, f32, load, store


@program
def sneaky(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f32]]):
    raw = Channel[Tile[32, 128, f32]](depth=2)
    cooked = Channel[Tile[32, 128, f32]](depth=2)

    @process(produces=[raw])
    def loader():
        for i in range(4):
            send(raw, load(X.tile(i % 2, 0, shape=(32, 128))))

    @process(consumes=[raw], produces=[cooked])
    def cook():
        for i in range(2):
            send(cooked, exp(recv(raw)))

    @process(consumes=[cooked])
    def storer():
        for i in range(2):
            store(Y.tile(i, 0, shape=(32, 128)), recv(cooked))
            extra = recv(raw)
