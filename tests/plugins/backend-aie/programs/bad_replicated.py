"""Bad input for AIE (valid CSP): channel `mid` joins 2 producer replicas with 4 consumer replicas; AIE pairs
replicas one to one or splits a channel round-robin towards a single process."""
from htp.dialects.csp import Channel, process, program, recv, replicate, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store, add


@program
def uneven(X: In[Tensor[128, 32, f32]], Y: Out[Tensor[128, 32, f32]]):
    work = Channel[Tile[16, 32, f32]](depth=2)
    mid = Channel[Tile[16, 32, f32]](depth=2)
    done = Channel[Tile[16, 32, f32]](depth=2)

    def generate():
        for i in range(8):
            send(work, load(X.tile(i, 0, shape=(16, 32))))

    def first():
        for k in range(4):
            send(mid, recv(work))

    def second():
        for k in range(2):
            t = recv(mid)
            send(done, add(t, t))

    def collect():
        for i in range(8):
            store(Y.tile(i, 0, shape=(16, 32)), recv(done))

    process("generator").produces(work).body(generate)
    a = process("first").consumes(work).produces(mid).body(first)
    b = process("second").consumes(mid).produces(done).body(second)
    process("collector").consumes(done).body(collect)
    replicate(a, 2)
    replicate(b, 4)
