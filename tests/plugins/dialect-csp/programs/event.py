"""An Event rendezvous: the producer sends a tile only after the consumer signals that it is ready."""
from htp.dialects.csp import Channel, Event, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store


@program
def handshake(X: In[Tensor[64, 128, f32]], Y: Out[Tensor[64, 128, f32]]):
    data = Channel[Tile[32, 128, f32]](depth=1)
    ready = Event()

    @process(consumes=[ready], produces=[data])
    def producer():
        for i in range(2):
            recv(ready)
            send(data, load(X.tile(i, 0, shape=(32, 128))))

    @process(produces=[ready], consumes=[data])
    def consumer():
        for i in range(2):
            send(ready)
            store(Y.tile(i, 0, shape=(32, 128)), recv(data))
