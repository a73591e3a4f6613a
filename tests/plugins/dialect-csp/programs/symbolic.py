"""Counts that stay symbolic: `n` tiles, known only at run time; the consumer's stream length follows."""
from htp.dialects.csp import Channel, consume, process, program, send
from htp.dialects.tile import In, Out, Scalar, Tensor, Tile, f32, i32, load, store


@program
def stream(X: In[Tensor[1024, 128, f32]], Y: Out[Tensor[32, 128, f32]], n: Scalar[i32]):
    tiles = Channel[Tile[32, 128, f32]](depth=2)

    @process(produces=[tiles])
    def produce():
        for i in range(n):
            send(tiles, load(X.tile(i, 0, shape=(32, 128))))
        send(tiles, load(X.tile(0, 0, shape=(32, 128))))

    @process(consumes=[tiles])
    def drain():
        for t in consume(tiles):
            store(Y.tile(0, 0, shape=(32, 128)), t)
