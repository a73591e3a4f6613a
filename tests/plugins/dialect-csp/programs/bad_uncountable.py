"""Bad: loops and jumps around channel operations whose counts cannot be known."""
from htp.dialects.csp import Channel, Event, consume, connect, process, program, recv, replicate, send
from htp.dialects.tile import In, Out, Scalar, Tensor, Tile, f32, i32, load, store, exp
N = 4

@program
def p(X: In[Tensor[8, 8, f32]], n: Scalar[i32]):
    c = Channel[Tile[8, 8, f32]](depth=1)
    @process(produces=[c])
    def a():
        while True:
            send(c, exp(load(X)))
        for i in range(n):
            for j in range(i):
                send(c, exp(load(X)))
        for q in [1, 2]:
            send(c, exp(load(X)))
        for i in range(0, 10, 0):
            send(c, exp(load(X)))
    @process(consumes=[c])
    def b():
        for i in range(3):
            recv(c)
            break
        return
        recv(c)
