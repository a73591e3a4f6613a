"""A CSP load -> compute -> store pipeline over depth-2 channels: Y = exp(X) + 1, 32 rows per item."""
from htp.dialects.csp import Channel, consume, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, adds, exp, f32, load, store

ROWS = 32
ITEMS = 8


@program
def pipeline(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    loaded = Channel[Tile[ROWS, 128, f32]](depth=2)
    computed = Channel[Tile[ROWS, 128, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(ITEMS):
            send(loaded, load(X.tile(i, 0, shape=(ROWS, 128))))

    @process(consumes=[loaded], produces=[computed])
    def compute():
        for t in consume(loaded):
            send(computed, adds(exp(t), 1.0))

    @process(consumes=[computed])
    def storer():
        for i in range(ITEMS):
            store(Y.tile(i, 0, shape=(ROWS, 128)), recv(computed))
