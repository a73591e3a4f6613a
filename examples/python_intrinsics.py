"""An intrinsic set written in Python: `fused.axpy(a, x, y)` (a * x + y) and `fused.softplus(x)`
(log(1 + exp(x))), declared by an HTP extension whose Python builders lower each op, per target, to the
portable tile ops the backends already know. No C++ and no plugin build: the set is a component like a
plugin's (the resolver checks that the target accepts it, the plan pins this file's sha256), and
`python -m htp.stubgen --plugins examples/python_intrinsics.py` writes its editor stub with the signatures
(into the imported htp package; `--out DIR` writes DIR/intrinsics/fused.pyi instead).

    python examples/python_intrinsics.py --target pto-a2a3sim     # or aie-npu1
"""
import sys

import numpy as np

from htp.dialects.tile import kernel, Tensor, Tile, In, Out, f32, load, store
from htp.dialects.wsp import workload, P
from htp.extension import Extension

import htp_example

# ---- the extension: intrinsic set `fused` ----------------------------------------------------------

ext = Extension("fused-intrinsics", version="1.0.0", summary="axpy and softplus as a Python intrinsic set")
fused = ext.intrinsic_set("fused", summary="fused elementwise ops", contract="elementwise")


@fused.op
def axpy(rw, a: float, x: Tile, y: Tile) -> Tile:
    """a * x + y"""
    return rw.expr("add(muls(x, a), y)", a=a, x=x, y=y)


@fused.op(targets=["aie-npu1"])
def axpy(rw, a: float, x: Tile, y: Tile) -> Tile:  # noqa: F811 (the AIE lowering of the same op)
    """a * x + y"""
    return rw.expr("add(y, muls(x, a))", a=a, x=x, y=y)


@fused.op
def softplus(rw, x: Tile) -> Tile:
    """log(1 + exp(x)), for inputs where exp does not overflow"""
    return rw.expr("log(adds(exp(x), 1.0))", x=x)


# ---- the program: uses the set like any other ------------------------------------------------------

from htp.intrinsics import fused as F  # noqa: E402  (exists once the extension above is declared)

M, N, ROWS = 64, 64, 16


@kernel
def axpy_softplus_rows(x: In[Tensor[ROWS, N, f32]], y: In[Tensor[ROWS, N, f32]], z: Out[Tensor[ROWS, N, f32]]):
    store(z, F.softplus(F.axpy(0.5, load(x), load(y))))


@workload
def axpy_softplus(X: In[Tensor[M, N, f32]], Y: In[Tensor[M, N, f32]], Z: Out[Tensor[M, N, f32]]):
    for i in P(M // ROWS):
        axpy_softplus_rows[i](X.tile(i, 0), Y.tile(i, 0), Z.tile(i, 0))


def make_inputs(rng):
    return {"X": rng.standard_normal((M, N)).astype("float32"), "Y": rng.standard_normal((M, N)).astype("float32")}


def reference(X, Y):
    return {"Z": np.log1p(np.exp(0.5 * X + Y))}


ENTRIES = {"pto-a2a3sim": axpy_softplus, "aie-npu1": axpy_softplus}


def show_lowering(ctx, pkg, target):
    """Prints the kernel after the set's lowering passes and checks that no `F.` call is left."""
    lowering = [p for p in pkg.passes if p.startswith("fused.")]
    lowered = pkg.dump(lowering[-1])
    body = lowered.split("def axpy_softplus_rows", 1)[1].split("\n\n", 1)[0]
    print(f"  lowered by {', '.join(lowering)}:\n    def axpy_softplus_rows"
          + body.replace("\n", "\n    "))
    return "F." not in body and "log(adds(exp(" in body


if __name__ == "__main__":
    sys.exit(htp_example.run(ENTRIES, make_inputs, reference, outputs=["Z"], rtol=1e-5, atol=1e-6,
                             description=__doc__, plugins=[sys.modules[__name__]], check_package=show_lowering))
