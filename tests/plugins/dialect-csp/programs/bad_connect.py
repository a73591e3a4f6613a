"""Bad: connect links channels of different element types, and distributes 6 items over 4 channels."""
from htp.dialects.csp import Channel, connect, process, program, recv, send
from htp.dialects.tile import In, Tensor, Tile, f16, f32, load


@program
def mislinked(X: In[Tensor[256, 128, f32]]):
    src = Channel[Tile[32, 128, f32]](depth=2)
    half = Channel[Tile[32, 128, f16]](depth=2)
    connect([src], [half])

    @process(produces=[src])
    def loader():
        for i in range(2):
            send(src, load(X.tile(i, 0, shape=(32, 128))))

    @process(consumes=[half])
    def drain():
        for i in range(2):
            recv(half)
