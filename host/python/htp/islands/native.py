"""The MLIR island as an HTP extension: pass ``mlir.native-kernels`` hands each tile kernel to MLIR and brings
back a native CPU build of it, packaged next to the target's own artifacts, to check a kernel's numerics fast
(microseconds per call, no simulator) against NumPy.

    import htp
    from htp.islands import native

    ctx = htp.Context(plugins=[native])                      # or htp-host --plugins <this file>
    pkg = ctx.compile(fn, "pto-a2a3sim", "out", options={"mlir.pipeline": [...]})   # pipeline optional
    kernels = native.native_kernels(pkg)                     # name -> mlir.NativeKernel
    kernels["softmax_rows"](x=x_tile, y=y_tile)

For every kernel of ``tile.kernels`` the pass runs four island steps through the host (each recorded in the
package under ``ir/islands/mlir.native-kernels/<kernel>.<step>/`` with its exact command, the tool's version,
input and output; cached by content hash; killed after ``mlir.timeout`` seconds, default 120):

1. ``mlir-opt`` with the user's pipeline (option ``mlir.pipeline``, default ``mlir.DEFAULT_PIPELINE``) over the
   kernel as MLIR (``mlir.kernel_to_mlir``: linalg/arith/math/scf on memrefs, every op located at its source
   line, so mlir-opt's errors come back at the kernel's line);
2. ``mlir-translate --mlir-to-llvmir``; 3. ``llc -O2`` to a position-independent object; 4. ``cc -shared``.

The result is ``native/<kernel>.so`` plus ``native/kernels.json`` (each kernel's ``tile.kernels`` entry, which
says how to call it). A kernel with an op MLIR lowering does not cover is a warning and is skipped.
Without the tools: an error naming the Debian package to install (``mlir-19-tools``, ``llvm-19``).
"""
from __future__ import annotations

import json
import os
import pathlib
import shlex

from htp.extension import Extension

from . import mlir

ext = Extension("mlir-island", version="0.1.0", summary="tile kernels through mlir-opt into native CPU code")

_pass = ext.pass_("mlir.native-kernels", stage="emit", requires=["IR.TileKernels"],
                  provides=["Artifact.NativeKernels"], applies_to=["Uses.Dialect(name=tile)"],
                  summary="a native CPU build of every tile kernel, through mlir-opt, mlir-translate, llc and cc")


def _tool(name: str) -> str:
    """The tool's path; a missing one is still returned (where it was looked for) so that the host's island
    runner reports it with the package to install."""
    try:
        return str(mlir.find_tool(name))
    except mlir.ToolMissing:
        return name if name == "cc" else str(pathlib.Path(os.environ.get("HTP_MLIR_BIN") or mlir.DEFAULT_BIN) / name)


def _kernel_nodes(rw) -> dict:
    """The FunctionDef of each function by name (for spans)."""
    return {n.name: n for n in rw.root().body if n.type in ("FunctionDef", "AsyncFunctionDef")}


@_pass.module
def build_native_kernels(rw) -> None:
    doc = rw.module_attr("tile.kernels")
    if not doc:
        return
    pipeline = rw.option("mlir.pipeline", mlir.DEFAULT_PIPELINE)
    if isinstance(pipeline, str):  # one string of mlir-opt arguments, split as a shell would
        pipeline = shlex.split(pipeline)
    if not isinstance(pipeline, list) or not all(isinstance(a, str) for a in pipeline):
        rw.error(rw.root(), "island.option",
                 f"option mlir.pipeline is a list of mlir-opt arguments (or one string of them), got {pipeline!r}")
        return
    timeout = float(rw.option("mlir.timeout", 120))
    nodes = _kernel_nodes(rw)
    built = []
    for kernel in doc.get("kernels", []):
        name = kernel["name"]
        at = nodes.get(name)
        try:
            text = mlir.kernel_to_mlir(kernel)
        except mlir.LoweringError as e:
            rw.warning(at, "island.unsupported", f"kernel '{name}' has no native build: {e}")
            continue

        def step(tool, argv, data, input_name, output_name):
            return rw.run_island(f"{name}.{tool}", [_tool(tool), *argv], data, at=at, timeout=timeout,
                                 input_name=input_name, output_name=output_name,
                                 package=mlir._TOOL_PACKAGES[tool])

        lowered = step("mlir-opt", list(pipeline), text.encode(), "input.mlir", "lowered.mlir")
        if lowered is None:
            return
        llvm_ir = step("mlir-translate", ["--mlir-to-llvmir"], lowered, "lowered.mlir", "kernel.ll")
        if llvm_ir is None:
            return
        obj = step("llc", ["-O2", "-filetype=obj", "-relocation-model=pic", "-o", "{output}"], llvm_ir, "kernel.ll",
                   "kernel.o")
        if obj is None:
            return
        so = step("cc", ["-shared", "-o", "{output}", "{input}", "-lm"], obj, "kernel.o", "kernel.so")
        if so is None:
            return
        rw.write_file(f"native/{name}.so", so, "native-kernel")
        built.append(kernel)
    rw.write_file("native/kernels.json", (json.dumps({"kernels": built}, indent=1) + "\n").encode(),
                  "native-kernel-index")


def native_kernels(package) -> dict:
    """The native kernels of a package compiled with this extension: name -> ``mlir.NativeKernel``."""
    root = pathlib.Path(getattr(package, "path", package))
    index = json.loads((root / "native" / "kernels.json").read_text())
    return {k["name"]: mlir.NativeKernel(root / "native" / f"{k['name']}.so", k) for k in index["kernels"]}
