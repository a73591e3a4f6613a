"""Bad input for AIE (valid CSP): two processes send into one channel; an object FIFO has one producer."""
from htp.dialects.csp import Channel, consume, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store


@program
def merge(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    c1 = Channel[Tile[16, 32, f32]](depth=2)

    @process(produces=[c1])
    def top():
        for i in range(2):
            send(c1, load(X.tile(i, 0, shape=(16, 32))))

    @process(produces=[c1])
    def bottom():
        for i in range(2):
            send(c1, load(X.tile(i + 2, 0, shape=(16, 32))))

    @process(consumes=[c1])
    def storer():
        for i in range(4):
            store(Y.tile(i, 0, shape=(16, 32)), recv(c1))
