"""Bad: items of an f32 stream are forwarded unchanged into an f16 channel."""
from htp.dialects.csp import Channel, consume, process, program, recv, send
from htp.dialects.tile import In, Tensor, Tile, f16, f32, load


@program
def p(X: In[Tensor[64, 128, f32]]):
    a = Channel[Tile[32, 128, f32]](depth=2)
    b = Channel[Tile[32, 128, f16]](depth=2)

    @process(produces=[a])
    def x():
        for i in range(2):
            send(a, load(X.tile(i, 0, shape=(32, 128))))

    @process(consumes=[a], produces=[b])
    def y():
        for t in consume(a):
            send(b, t)

    @process(consumes=[b])
    def z():
        for t in consume(b):
            pass
