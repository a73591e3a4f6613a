"""Bad: a tile received as Tile[32, 128, f32] is annotated Tile[16, 128, f32]."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store


@program
def wrong_shape(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f32]]):
    tiles = Channel[Tile[32, 128, f32]](depth=2)

    @process(produces=[tiles])
    def loader():
        for i in range(2):
            send(tiles, load(X.tile(i, 0, shape=(32, 128))))

    @process(consumes=[tiles])
    def storer():
        for i in range(2):
            t: Tile[16, 128, f32] = recv(tiles)
            store(Y.tile(i, 0, shape=(16, 128)), t)
