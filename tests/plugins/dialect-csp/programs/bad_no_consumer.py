"""Bad: `side` is produced but no process consumes it."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, exp, f32, load, store


@program
def dangling(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f32]]):
    main = Channel[Tile[32, 128, f32]](depth=2)
    side = Channel[Tile[32, 128, f32]](depth=2)

    @process(produces=[main, side])
    def loader():
        for i in range(2):
            t = load(X.tile(i, 0, shape=(32, 128)))
            send(main, t)
            send(side, exp(t))

    @process(consumes=[main])
    def storer():
        for i in range(2):
            store(Y.tile(i, 0, shape=(32, 128)), recv(main))
