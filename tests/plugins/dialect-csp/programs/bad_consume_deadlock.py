"""Bad: the relay's stream loop waits for `requests` while the client waits for the reply to its first one."""
from htp.dialects.csp import Channel, consume, process, program, recv, send
from htp.dialects.tile import Tile, exp, f32


@program
def relay_loop():
    requests = Channel[Tile[32, 128, f32]](depth=2)
    replies = Channel[Tile[32, 128, f32]](depth=2)

    @process(consumes=[requests], produces=[replies])
    def relay():
        for t in consume(requests):
            send(replies, exp(t))

    @process(consumes=[replies], produces=[requests])
    def client():
        for i in range(4):
            t = recv(replies)
            send(requests, t)
