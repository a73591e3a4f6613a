"""Bad: the loader sends 8 tiles, the storer receives 6."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store


@program
def short_read(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    tiles = Channel[Tile[32, 128, f32]](depth=2)

    @process(produces=[tiles])
    def loader():
        for i in range(8):
            send(tiles, load(X.tile(i, 0, shape=(32, 128))))

    @process(consumes=[tiles])
    def storer():
        for i in range(6):
            store(Y.tile(i, 0, shape=(32, 128)), recv(tiles))
