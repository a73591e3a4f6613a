"""Bad: one branch sends a tile, the other does not."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import In, Out, Scalar, Tensor, Tile, f32, i32, load, store


@program
def maybe(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f32]], flag: Scalar[i32]):
    tiles = Channel[Tile[32, 128, f32]](depth=2)

    @process(produces=[tiles])
    def loader():
        if flag > 0:
            send(tiles, load(X.tile(0, 0, shape=(32, 128))))
        else:
            pass

    @process(consumes=[tiles])
    def storer():
        store(Y.tile(0, 0, shape=(32, 128)), recv(tiles))
