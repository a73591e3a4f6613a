"""Bad: connect distributes the 6 items of `src` over 4 channels."""
from htp.dialects.csp import Channel, connect, process, program, recv, send
from htp.dialects.tile import In, Tensor, Tile, f32, load


@program
def uneven_split(X: In[Tensor[256, 128, f32]]):
    src = Channel[Tile[32, 128, f32]](depth=2)
    a = Channel[Tile[32, 128, f32]](depth=2)
    b = Channel[Tile[32, 128, f32]](depth=2)
    c = Channel[Tile[32, 128, f32]](depth=2)
    d = Channel[Tile[32, 128, f32]](depth=2)
    connect([src], [a, b, c, d])

    @process(produces=[src])
    def loader():
        for i in range(6):
            send(src, load(X.tile(i, 0, shape=(32, 128))))

    @process(consumes=[a, b, c, d])
    def drain():
        for i in range(2):
            recv(a)
            recv(b)
            recv(c)
            recv(d)
