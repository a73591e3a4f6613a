"""Bad: 16 work items for three workers taking four each."""
from htp.dialects.csp import Channel, process, program, recv, replicate, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, relu, store


@program
def uneven(X: In[Tensor[512, 128, f32]], Y: Out[Tensor[512, 128, f32]]):
    work = Channel[Tile[32, 128, f32]](depth=4)
    done = Channel[Tile[32, 128, f32]](depth=4)

    def generate():
        for i in range(16):
            send(work, load(X.tile(i, 0, shape=(32, 128))))

    def work_on():
        for k in range(4):
            send(done, relu(recv(work)))

    def collect():
        for i in range(12):
            store(Y.tile(i, 0, shape=(32, 128)), recv(done))

    process("generator").produces(work).body(generate)
    worker = process("worker").consumes(work).produces(done).body(work_on)
    process("collector").consumes(done).body(collect)
    replicate(worker, 3)
