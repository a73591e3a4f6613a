"""A generator feeding four replicas of a worker through one shared channel, built with process(...)."""
from htp.dialects.csp import Channel, process, program, recv, replicate, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, relu, store

WORKERS = 4


@program
def fanout(X: In[Tensor[512, 128, f32]], Y: Out[Tensor[512, 128, f32]]):
    work = Channel[Tile[32, 128, f32]](depth=4)
    done = Channel[Tile[32, 128, f32]](depth=4, pack=2)

    def generate():
        for i in range(16):
            send(work, load(X.tile(i, 0, shape=(32, 128))))

    def work_on():
        for k in range(16 // WORKERS):
            t = recv(work)
            send(done, relu(t))

    def collect():
        for i in range(16):
            store(Y.tile(i, 0, shape=(32, 128)), recv(done))

    process("generator").produces(work).body(generate)
    worker = process("worker").consumes(work).produces(done).body(work_on)
    process("collector").consumes(done).body(collect)
    replicate(worker, WORKERS)
