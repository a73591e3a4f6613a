"""Bad: ping and pong each wait to receive from the other before sending."""
from htp.dialects.csp import Channel, process, program, recv, send
from htp.dialects.tile import Tile, exp, f32


@program
def ping_pong():
    a_to_b = Channel[Tile[32, 128, f32]](depth=1)
    b_to_a = Channel[Tile[32, 128, f32]](depth=1)

    @process(consumes=[b_to_a], produces=[a_to_b])
    def ping():
        for i in range(4):
            t = recv(b_to_a)
            send(a_to_b, exp(t))

    @process(consumes=[a_to_b], produces=[b_to_a])
    def pong():
        for i in range(4):
            t = recv(a_to_b)
            send(b_to_a, exp(t))
