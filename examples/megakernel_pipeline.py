"""A CSP megakernel: loader -> compute -> storer processes over bounded depth-2 channels. The dialect
checks the protocol (balanced sends/receives, no deadlock under the depths) before any code is emitted.

    python examples/megakernel_pipeline.py --target pto-a2a3sim
"""
import sys

import numpy as np

from htp.dialects.csp import Channel, consume, process, program, recv, send
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store, exp, muls

ROWS, COLS, TILES = 32, 64, 4
TOTAL = ROWS * TILES

import htp_example


@program
def pipeline(X: In[Tensor[TOTAL, COLS, f32]], Y: Out[Tensor[TOTAL, COLS, f32]]):
    loaded = Channel[Tile[ROWS, COLS, f32]](depth=2)
    computed = Channel[Tile[ROWS, COLS, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(TILES):
            send(loaded, load(X.tile(i, 0, shape=(ROWS, COLS))))

    @process(consumes=[loaded], produces=[computed])
    def compute():
        for t in consume(loaded):
            send(computed, muls(exp(t), 0.5))

    @process(consumes=[computed])
    def storer():
        for i in range(TILES):
            store(Y.tile(i, 0, shape=(ROWS, COLS)), recv(computed))


def make_inputs(rng):
    return {"X": rng.standard_normal((ROWS * TILES, COLS), dtype="float32")}


def reference(X):
    return {"Y": 0.5 * np.exp(X)}


# The constructs this example runs on every target of ENTRIES (docs/parity.md, scripts/parity_table.py).
PARITY_CONSTRUCTS = ["CSP program (processes, channels)"]

# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": pipeline, "aie-npu1": pipeline}


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference,
                             outputs=["Y"], rtol=1e-5, atol=1e-5, description=__doc__))
