"""Bad: malformed declarations, each reported at its own span."""
from htp.dialects.csp import Channel, Event, consume, connect, process, program, recv, replicate, send
from htp.dialects.tile import In, Out, Scalar, Tensor, Tile, f32, i32, load, store, exp
N = 4

@program
def p():
    c = Channel[Tile[8, 8, f32]](depth=1)
    c = Channel[Tile[8, 8, f32]](depth=0, pack=-1)
    @process(produces=[c])
    def x():
        send(c, 1)
    @process(name="x", consumes=[c])
    def y():
        recv(c)
