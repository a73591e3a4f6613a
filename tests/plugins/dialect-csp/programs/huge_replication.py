"""Too large to run for the deadlock check: 5000 replicas of a worker (accepted with a warning)."""
from htp.dialects.csp import Channel, process, program, recv, replicate, send
from htp.dialects.tile import In, Tensor, Tile, f32, load


@program
def swarm(X: In[Tensor[32, 128, f32]]):
    work = Channel[Tile[32, 128, f32]](depth=8)

    @process(produces=[work])
    def generator():
        for i in range(5000):
            send(work, load(X.tile(0, 0, shape=(32, 128))))

    @process(consumes=[work])
    def worker():
        recv(work)

    replicate(worker, 5000)
