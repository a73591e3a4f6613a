"""A load -> compute -> store pipeline: three processes over two depth-2 channels."""
from htp.dialects.csp import Channel, consume, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, exp, f32, load, store

ROWS = 32
TILES = 8


@program
def pipeline(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    loaded = Channel[Tile[ROWS, 128, f32]](depth=2)
    computed = Channel[Tile[ROWS, 128, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(TILES):
            send(loaded, load(X.tile(i, 0, shape=(ROWS, 128))))

    @process(consumes=[loaded], produces=[computed])
    def compute():
        for t in consume(loaded):
            send(computed, exp(t))

    @process(consumes=[computed])
    def storer():
        for i in range(TILES):
            store(Y.tile(i, 0, shape=(ROWS, 128)), recv(computed))
