"""connect: one channel distributed over two workers, their results joined into one channel."""
from htp.dialects.csp import Channel, connect, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, exp, f32, load, store


@program
def split_join(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
    loaded = Channel[Tile[32, 128, f32]](depth=2)
    left_in = Channel[Tile[32, 128, f32]](depth=1)
    right_in = Channel[Tile[32, 128, f32]](depth=1)
    left_out = Channel[Tile[32, 128, f32]](depth=1)
    right_out = Channel[Tile[32, 128, f32]](depth=1)
    joined = Channel[Tile[32, 128, f32]](depth=2)
    connect([loaded], [left_in, right_in])
    connect([left_out, right_out], [joined])

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(32, 128))))

    @process(consumes=[left_in], produces=[left_out])
    def left():
        for i in range(4):
            send(left_out, exp(recv(left_in)))

    @process(consumes=[right_in], produces=[right_out])
    def right():
        for i in range(4):
            send(right_out, exp(recv(right_in)))

    @process(consumes=[joined])
    def storer():
        for i in range(8):
            store(Y.tile(i, 0, shape=(32, 128)), recv(joined))
