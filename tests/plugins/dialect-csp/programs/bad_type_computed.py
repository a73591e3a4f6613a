"""Bad: a tile cast to f16 is sent on an f32 channel (found with the tile dialect's types)."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, cast, f16, f32, load, store


@program
def wrong_cast(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f32]]):
    tiles = Channel[Tile[32, 128, f32]](depth=2)

    @process(produces=[tiles])
    def loader():
        for i in range(2):
            send(tiles, cast(load(X.tile(i, 0, shape=(32, 128))), f16))

    @process(consumes=[tiles])
    def storer():
        for i in range(2):
            store(Y.tile(i, 0, shape=(32, 128)), recv(tiles))
