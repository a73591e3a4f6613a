# pipeline_fuzz reproducer: B.tile(i, i) over P(4) compiled for pto-a2a3sim and failed only at run time
"""C = A + B over a grid of tiles: the smallest complete HTP program (a tile kernel and a WSP workload).

    python examples/vector_add.py --target pto-a2a3sim
"""
import sys

from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add
from htp.dialects.wsp import workload, schedule, P, dispatch, round_robin

import htp_example

M, N = 128, 64        # the whole vectors, as a 128 x 64 matrix
TM, TN = 32, 64       # one tile per task: 4 tasks (fits one AIE core's memory with double buffering)


@kernel
def add_tile(x: In[Tensor[TM, TN, f32]], y: In[Tensor[TM, TN, f32]], z: Out[Tensor[TM, TN, f32]]):
    store(z, add(load(x), load(y)))


@workload
def vector_add(A: In[Tensor[M, N, f32]], B: In[Tensor[M, N, f32]], C: Out[Tensor[M, N, f32]]):
    for i in P(M // TM):
        add_tile[i](A.tile(i, 0), B.tile(i, i), C.tile(i, 0))


@schedule(vector_add)
def vector_add_schedule():
    dispatch(round_robin(2))


def make_inputs(rng):
    return {"A": rng.standard_normal((M, N), dtype="float32"), "B": rng.standard_normal((M, N), dtype="float32")}


def reference(A, B):
    return {"C": A + B}


# target -> entry: the targets this example runs on (tests, stress test and bench read this).
ENTRIES = {"pto-a2a3sim": vector_add, "aie-npu1": vector_add}


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference,
                             outputs=["C"], description=__doc__))
