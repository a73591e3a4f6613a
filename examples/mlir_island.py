"""An external-compiler island: HTP's MLIR island (`htp.islands.native`) hands each tile kernel of a program to
MLIR's own tools and packages a native CPU build of it beside the target's artifacts, to check the kernel's
numerics against NumPy without a simulator.

    python examples/mlir_island.py --target pto-a2a3sim     # or aie-npu1

The program is examples/softmax.py. The pass `mlir.native-kernels` lowers its kernel to MLIR (linalg,
arith, math, scf on memrefs), runs `mlir-opt` with the pipeline given as the compile option `mlir.pipeline`
(here: canonicalize and CSE, then the default lowering to the LLVM dialect), `mlir-translate`, `llc` and
`cc`, each a recorded island step (`ir/islands/mlir.native-kernels/<kernel>.<tool>/`: exact command, tool
version, input, output, cached by content hash). The example then runs the program on the target's
simulator as usual and the native kernel on every row tile, both against NumPy. Needs Debian's
mlir-19-tools and llvm-19 (scripts/bootstrap.sh).
"""
import json
import sys

import numpy as np

from htp.islands import mlir, native

import htp_example
from softmax import M, ROWS, make_inputs, reference, softmax  # the program: examples/softmax.py

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
