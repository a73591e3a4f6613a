"""Bad: a tile received from an f32 channel is forwarded unchanged into an f16 channel."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, f16, f32, load, store


@program
def wrong_dtype(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f16]]):
    wide = Channel[Tile[32, 128, f32]](depth=2)
    narrow = Channel[Tile[32, 128, f16]](depth=2)

    @process(produces=[wide])
    def loader():
        for i in range(2):
            send(wide, load(X.tile(i, 0, shape=(32, 128))))

    @process(consumes=[wide], produces=[narrow])
    def forward():
        for i in range(2):
            t = recv(wide)
            send(narrow, t)

    @process(consumes=[narrow])
    def storer():
        for i in range(2):
            store(Y.tile(i, 0, shape=(32, 128)), recv(narrow))
