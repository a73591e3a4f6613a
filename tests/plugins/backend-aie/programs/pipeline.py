"""A CSP three-stage pipeline on three neighbouring AIE cores: loader -> c1 -> (x + 1)^2 -> c2 -> storer,
four 16 x 32 tiles through depth-2 channels."""
from htp.dialects.csp import Channel, consume, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store, adds, mul

ROWS = 16
TILES = 4


@program
def pipeline(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    c1 = Channel[Tile[ROWS, 32, f32]](depth=2)
    c2 = Channel[Tile[ROWS, 32, f32]](depth=2)

    @process(produces=[c1])
    def loader():
        for i in range(TILES):
            send(c1, load(X.tile(i, 0, shape=(ROWS, 32))))

    @process(consumes=[c1], produces=[c2])
    def square():
        for t in consume(c1):
            v = adds(t, 1.0)
            send(c2, mul(v, v))

    @process(consumes=[c2])
    def storer():
        for i in range(TILES):
            store(Y.tile(i, 0, shape=(ROWS, 32)), recv(c2))
