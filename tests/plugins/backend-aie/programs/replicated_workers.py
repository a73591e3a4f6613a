"""A replicated CSP process: `replicate(worker, 2)` shares `work` and `done` between two worker replicas (each
item goes to one of them). On AIE each replica is a core with channels of its own; the generator and the
collector rotate over them (item t to / from replica t mod 2), one valid schedule of the shared channels."""
from htp.dialects.csp import Channel, process, program, recv, replicate, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store, add


@program
def fanout(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    work = Channel[Tile[16, 32, f32]](depth=2)
    done = Channel[Tile[16, 32, f32]](depth=2)

    def generate():
        for i in range(4):
            send(work, load(X.tile(i, 0, shape=(16, 32))))

    def work_on():
        for k in range(2):
            t = recv(work)
            send(done, add(t, t))

    def collect():
        for i in range(4):
            store(Y.tile(i, 0, shape=(16, 32)), recv(done))

    process("generator").produces(work).body(generate)
    worker = process("worker").consumes(work).produces(done).body(work_on)
    process("collector").consumes(done).body(collect)
    replicate(worker, 2)
