"""Bad: the producer puts two tiles into a depth-1 channel before the consumer receives the first."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store


@program
def too_shallow(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f32]]):
    tiles = Channel[Tile[32, 128, f32]](depth=1)
    header = Channel[Tile[32, 128, f32]](depth=1)

    @process(produces=[tiles, header])
    def producer():
        send(tiles, load(X.tile(0, 0, shape=(32, 128))))
        send(tiles, load(X.tile(1, 0, shape=(32, 128))))
        send(header, load(X.tile(0, 0, shape=(32, 128))))

    @process(consumes=[tiles, header])
    def consumer():
        h = recv(header)
        store(Y.tile(0, 0, shape=(32, 128)), recv(tiles))
        store(Y.tile(1, 0, shape=(32, 128)), recv(tiles))
