"""An external-compiler island: HTP's MLIR island (`htp.islands.native`) hands each tile kernel of a program to
MLIR's own tools and packages a native CPU build of it beside the target's artifacts, to check the kernel's
numerics against NumPy without a simulator.

    python examples/mlir_island.py --target pto-a2a3sim     # or aie-npu1

The pass `mlir.native-kernels` lowers the kernel to MLIR (linalg, arith, math, scf on memrefs), runs
`mlir-opt` with the pipeline given as the compile option `mlir.pipeline` (here: canonicalize and CSE, then
the default lowering to the LLVM dialect), `mlir-translate`, `llc` and `cc`, each a recorded island step
(`ir/islands/mlir.native-kernels/<kernel>.<tool>/`: exact command, tool version, input, output, cached by
content hash). The example then runs the program on the target's simulator as usual and the native kernel
on every row tile, both against NumPy. Needs Debian's mlir-19-tools and llvm-19 (scripts/bootstrap.sh).
"""
import json
import sys

import numpy as np

from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, exp, rowmax, rowsum, rowexpand_sub, rowexpand_div
from htp.dialects.wsp import workload, P
from htp.islands import mlir, native

import htp_example

M, N, ROWS = 64, 128, 16


@kernel
def softmax_rows(x: In[Tensor[ROWS, N, f32]], y: Out[Tensor[ROWS, N, f32]]):
    t = load(x)
    e = exp(rowexpand_sub(t, rowmax(t)))
    store(y, rowexpand_div(e, rowsum(e)))


@workload
def softmax(X: In[Tensor[M, N, f32]], Y: Out[Tensor[M, N, f32]]):
    for i in P(M // ROWS):
        softmax_rows[i](X.tile(i, 0), Y.tile(i, 0))


def make_inputs(rng):
    return {"X": (3 * rng.standard_normal((M, N))).astype("float32")}


def reference(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return {"Y": e / e.sum(axis=1, keepdims=True)}


ENTRIES = {"pto-a2a3sim": softmax, "aie-npu1": softmax}
PIPELINE = ["--canonicalize", "--cse", *mlir.DEFAULT_PIPELINE]


def check_native(ctx, pkg, target):
    """Runs the packaged native build of the kernel on every row tile against NumPy; prints the island's record."""
    step = pkg.path / "ir/islands/mlir.native-kernels/softmax_rows.mlir-opt/command.json"
    record = json.loads(step.read_text())
    print(f"  island: {' '.join(record['command'][:3])} ... ({record['tool_version']}, "
          f"{'cached' if record['cached'] else 'ran ' + format(record['seconds'], '.2f') + ' s'})")
    X = make_inputs(np.random.default_rng(0))["X"]
    want = reference(X)["Y"]
    run = native.native_kernels(pkg)["softmax_rows"]
    got = np.concatenate([run(x=np.ascontiguousarray(X[i:i + ROWS]))["y"] for i in range(0, M, ROWS)])
    err = float(np.max(np.abs(got - want)))
    ok = bool(np.allclose(got, want, rtol=1e-5, atol=1e-7))
    print(f"  native softmax_rows (mlir-opt -> llc -> cc): max |error| vs NumPy = {err:.3g}  {'ok' if ok else 'MISMATCH'}")
    return ok


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference, outputs=["Y"], rtol=1e-4, atol=1e-6,
                             description=__doc__, plugins=[native], check_package=check_native,
                             options={"mlir.pipeline": PIPELINE}))
