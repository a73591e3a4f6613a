"""Tile kernels through MLIR: one kernel of ``tile.kernels`` as MLIR 19 text, and that text as a native library.

``tile.kernels`` (``htp.tile.kernels.v1``) is the register IR pass ``tile.lower`` writes (docs/ir-contracts.md
§4, schema docs/schemas/tile-kernels.schema.json, C++ reader ``<htp/tile_kernels.hpp>``). This module
translates one of its kernels into the upstream dialects ``func``, ``memref``, ``arith``, ``math``, ``linalg``
and ``scf``, lowers that to the LLVM dialect with ``mlir-opt`` and builds a shared library with
``mlir-translate``, ``llc`` and ``cc``::

    text = kernel_to_mlir(kernel)              # MLIR on memrefs: one func.func
    so = lower_and_build(kernel, workdir)      # input.mlir, lowered.mlir, kernel-<hash>.so in workdir
    NativeKernel(so, kernel)(x=x, y=y)         # runs it on NumPy arrays, writing y in place

**The function.** ``func.func @<kernel>`` takes one argument per parameter that is not a ``constexpr``, in
order: a tensor parameter as a static memref of its body shape (``local_shape``: the per-core block of a
kernel with a layout), a tile parameter as a memref of its shape, a scalar by value. With
``DEFAULT_PIPELINE`` (bare-pointer calling convention) memrefs are plain pointers to contiguous row-major
data, so the symbol is callable from C: ``void softmax_rows(float *x, float *y)``. A ``constexpr`` is
folded from its ``value``; one without a value must be given one in the kernel's ``params`` first.

**The body.** Tile registers are ``memref.alloc``'ed at entry (freed at exit), scalar registers are rank-0
``memref.alloca``'s; loads and stores are ``linalg.copy`` between a tile and a ``memref.subview`` of the
tensor; elementwise, expansion and cast ops are ``linalg.generic`` with ``arith``/``math`` bodies;
reductions ``linalg.generic`` with a reduction dimension; ``matmul``, ``transpose``, ``full`` and ``copy``
the named linalg ops; ``for``/``if`` ``scf.for``/``scf.if``; scalar expressions ``arith`` on i64, f64 and
i1. Every op carries ``loc("file":line:col)`` of its statement's span (1-based columns, as HTP renders
diagnostics), so a tool's error names the kernel's source line.

**Semantics** follow docs/dialects/tile.md and both simulators: f16 and bf16 compute in f32; reductions
accumulate in that compute type; a float-to-integer cast truncates toward zero as NumPy's ``astype`` on x86
(a value the integer cannot hold, or NaN, is INT32_MIN narrowed; INT64_MIN for 64 bits); integer division
floors (``arith.floordivsi``, NumPy's ``//``); ``max``/``min``/``relu`` propagate NaN (``arith.maximumf``, as
NumPy's ``maximum``).
Scalar expressions follow Python (floor ``//`` and ``%``). Offsets that are literals are checked against the
tensor's bounds; runtime offsets are not (as in the C++ backends). An op without a lowering raises
``UnsupportedOp`` rather than producing anything approximate.

The tools are LLVM 19's (``/usr/lib/llvm-19/bin``, or ``$HTP_MLIR_BIN``); every tool runs through a
``run(argv, input_text) -> stdout`` callable, ``run_subprocess`` by default, so a host can substitute its
own process runner."""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import math
import os
import pathlib
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

__all__ = ["kernel_to_mlir", "lower_mlir", "build_native", "lower_and_build", "NativeKernel", "find_tool",
           "run_subprocess", "DEFAULT_PIPELINE", "DEFAULT_BIN", "LoweringError", "UnsupportedOp",
           "ToolMissing", "ToolError"]

DEFAULT_BIN = "/usr/lib/llvm-19/bin"
TOOL_TIMEOUT_SECONDS = 300
STDERR_TAIL_LINES = 40

# mlir-opt arguments taking kernel_to_mlir's output to the LLVM dialect. Order matters: linalg becomes scf
# loops first (their bodies hold arith ops); arith-expand then rewrites floordivsi and ceildivsi, which
# arith-to-llvm does not lower, maximumf/minimumf into compares, and bf16 extf/truncf into integer ops
# (libgcc 12 has no __truncsfbf2); math ops LLVM has intrinsics for go to LLVM, the rest (tanh) to libm
# calls; strided subviews and collapse_shape become explicit metadata (expand-strided-metadata, whose
# affine.apply lower-affine removes); the bare-pointer convention makes each static memref argument a
# plain pointer.
DEFAULT_PIPELINE = [
    "--convert-linalg-to-loops",
    "--arith-expand=include-bf16=true",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--lower-affine",
    "--finalize-memref-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-func-to-llvm=use-bare-ptr-memref-call-conv=1",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
]

Runner = Callable[[list, Optional[str]], str]


# ---- errors ---------------------------------------------------------------------------------------------

class LoweringError(ValueError):
    """The kernel cannot be translated: the document is inconsistent, or a construct has no lowering."""


class UnsupportedOp(LoweringError):
    """An op (statement or scalar-expression operator) of the kernel that this lowering does not support."""

    def __init__(self, op_name: str, kernel_name: str, reason: str = "it has no MLIR lowering"):
        self.op_name = op_name
        self.kernel_name = kernel_name
        super().__init__(f"kernel '{kernel_name}': op '{op_name}' is not supported by the MLIR lowering: "
                         f"{reason}")


class ToolMissing(RuntimeError):
    """A tool of the build is not installed; the message names the Debian package that provides it."""

    def __init__(self, tool: str, where: str, package: str):
        self.tool = tool
        self.package = package
        super().__init__(f"{tool} not found in {where}; install the Debian package {package} "
                         f"(apt-get install {package})")


class ToolError(RuntimeError):
    """A tool failed: its argv, exit status (None when it timed out) and the last lines of its stderr."""

    def __init__(self, argv: list, returncode: Optional[int], stderr_tail: str):
        self.argv = [str(a) for a in argv]
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        status = "timed out" if returncode is None else f"exit status {returncode}"
        super().__init__(f"{pathlib.Path(self.argv[0]).name} failed ({status}): {' '.join(self.argv)}\n"
                         f"{stderr_tail}")


# ---- tools ----------------------------------------------------------------------------------------------

_TOOL_PACKAGES = {"mlir-opt": "mlir-19-tools", "mlir-translate": "mlir-19-tools", "llc": "llvm-19", "cc": "gcc"}


def find_tool(name: str) -> pathlib.Path:
    """The path of tool ``name``: an LLVM tool (mlir-opt, mlir-translate, llc) in ``$HTP_MLIR_BIN`` or, when
    that is unset, ``/usr/lib/llvm-19/bin``; ``cc`` on ``PATH``. Raises ``ToolMissing`` naming the Debian
    package to install."""
    if name == "cc":
        found = shutil.which("cc")
        if found:
            return pathlib.Path(found)
        raise ToolMissing(name, "PATH", _TOOL_PACKAGES[name])
    env = os.environ.get("HTP_MLIR_BIN")
    directory = pathlib.Path(env or DEFAULT_BIN)
    path = directory / name
    if path.is_file() and os.access(path, os.X_OK):
        return path
    where = f"{directory} (HTP_MLIR_BIN)" if env else str(directory)
    raise ToolMissing(name, where, _TOOL_PACKAGES.get(name, "llvm-19"))


def run_subprocess(argv: list, input_text: Optional[str] = None) -> str:
    """Runs ``argv`` with ``input_text`` on stdin (none: /dev/null) and returns its stdout; raises
    ``ToolError`` with the tail of its stderr when it fails or outlives ``TOOL_TIMEOUT_SECONDS``."""
    argv = [str(a) for a in argv]
    stdin = {"input": input_text} if input_text is not None else {"stdin": subprocess.DEVNULL}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_SECONDS, check=False,
                              **stdin)
    except subprocess.TimeoutExpired:
        raise ToolError(argv, None, f"no result after {TOOL_TIMEOUT_SECONDS} s") from None
    if done.returncode != 0:
        tail = "\n".join(done.stderr.rstrip().splitlines()[-STDERR_TAIL_LINES:])
        raise ToolError(argv, done.returncode, tail)
    return done.stdout


def lower_mlir(mlir_text: str, *, pipeline: list = DEFAULT_PIPELINE, run: Runner = run_subprocess) -> str:
    """``mlir-opt`` with the pass arguments ``pipeline`` over ``mlir_text``: the lowered module's text."""
    return run([str(find_tool("mlir-opt")), *pipeline], mlir_text)


def build_native(llvm_dialect_mlir: str, workdir: pathlib.Path, *,
                 run: Runner = run_subprocess) -> pathlib.Path:
    """Builds a module in the LLVM dialect into a shared library in ``workdir``: ``mlir-translate
    --mlir-to-llvmir``, ``llc -O2`` (position-independent object) and ``cc -shared ... -lm``. The files are
    named after a hash of the LLVM IR, so a rebuilt kernel never reuses a library the process has loaded."""
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    llvm_ir = run([str(find_tool("mlir-translate")), "--mlir-to-llvmir"], llvm_dialect_mlir)
    stem = "kernel-" + hashlib.sha256(llvm_ir.encode()).hexdigest()[:16]
    ll, obj, so = workdir / f"{stem}.ll", workdir / f"{stem}.o", workdir / f"{stem}.so"
    ll.write_text(llvm_ir)
    run([str(find_tool("llc")), "-O2", "-filetype=obj", "-relocation-model=pic", str(ll), "-o", str(obj)], None)
    run([str(find_tool("cc")), "-shared", "-o", str(so), str(obj), "-lm"], None)
    return so


def lower_and_build(kernel: dict, workdir: pathlib.Path, pipeline: list = DEFAULT_PIPELINE,
                    run: Runner = run_subprocess) -> pathlib.Path:
    """``kernel_to_mlir`` → ``mlir-opt pipeline`` → ``build_native``; writes ``input.mlir`` and
    ``lowered.mlir`` in ``workdir`` and returns the shared library's path."""
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    text = kernel_to_mlir(kernel)
    (workdir / "input.mlir").write_text(text)
    lowered = lower_mlir(text, pipeline=pipeline, run=run)
    (workdir / "lowered.mlir").write_text(lowered)
    return build_native(lowered, workdir, run=run)


# ---- types ----------------------------------------------------------------------------------------------

# HTP dtypes plus the scalar-expression types f64 and i1. u8 is a signless i8 read as unsigned.
_ELEM = {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64", "i1": "i1", "i8": "i8", "i16": "i16",
         "i32": "i32", "i64": "i64", "u8": "i8"}
_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
         "u8": 8}
_FLOATS = {"f16", "bf16", "f32", "f64"}
_UNSIGNED = {"u8", "i1"}


def _compute_dtype(dtype: str) -> str:
    """The type a tile's elements are computed in: f32 for the 16-bit floats, else the dtype itself."""
    return "f32" if dtype in ("f16", "bf16") else dtype


def _memref(shape, dtype: str, layout: str = "") -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"memref<{dims}{_ELEM[dtype]}{', ' + layout if layout else ''}>"


def _float_literal(value: float, dtype: str) -> str:
    if math.isfinite(value):
        text = repr(float(value))
        return text.replace("e", ".0e") if "e" in text and "." not in text else text  # MLIR needs the '.'
    bits = struct.pack(">d" if dtype == "f64" else ">f", value)  # inf / nan: the bit pattern
    return "0x" + bits.hex().upper()


def _mlir_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20:
            out.append(f"\\{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class _Buffer:
    """A memref value: a tensor parameter, a tile register or a view of one."""
    ssa: str
    shape: tuple
    dtype: str
    layout: str = ""

    @property
    def type(self) -> str:
        return _memref(self.shape, self.dtype, self.layout)


@dataclass(frozen=True)
class _AbiParam:
    """A parameter that is an argument of the generated function; shape None for a scalar."""
    name: str
    kind: str                # tensor | tile | scalar
    dir: str
    dtype: str
    shape: Optional[tuple]


def _abi_params(kernel: dict) -> list:
    """The function's arguments, in order: every parameter but the constexprs."""
    out = []
    for p in kernel.get("params", []):
        t = p["type"]
        if t["kind"] == "tensor":
            shape = tuple(p.get("local_shape") or t["shape"])
            out.append(_AbiParam(p["name"], "tensor", p["dir"], t["dtype"], shape))
        elif t["kind"] == "tile":
            out.append(_AbiParam(p["name"], "tile", p["dir"], t["dtype"], tuple(t["shape"])))
        elif t["kind"] == "scalar":
            out.append(_AbiParam(p["name"], "scalar", p["dir"], t["dtype"], None))
        elif t["kind"] != "constexpr":
            raise LoweringError(f"kernel '{kernel.get('name')}': parameter '{p['name']}' has unknown kind "
                                f"'{t['kind']}'")
    return out


# ---- ops ------------------------------------------------------------------------------------------------

_BINARY = {"add", "sub", "mul", "div", "max", "min"}
_SCALAR_FORMS = {"adds": "add", "subs": "sub", "muls": "mul", "divs": "div", "maxs": "max", "mins": "min"}
_UNARY = {"exp", "log", "sqrt", "rsqrt", "abs", "neg", "relu", "sigmoid", "tanh", "recip"}
_REDUCTIONS = {f"{axis}{kind}": (axis, kind) for axis in ("row", "col") for kind in ("sum", "max", "min")}
_EXPAND_BINARY = {f"{axis}expand_{op}": (axis, op) for axis in ("row", "col") for op in _BINARY}
# The intrinsic sets whose ops mean what the portable op of the same name means (docs/intrinsics.md §4).
_SETS = {None, "tile", "pto", "aie"}

_FLOAT_BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf", "div": "arith.divf",
                 "max": "arith.maximumf", "min": "arith.minimumf"}
_SIGNED_BINARY = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli", "div": "arith.floordivsi",
                  "max": "arith.maxsi", "min": "arith.minsi"}
_UNSIGNED_BINARY = {**_SIGNED_BINARY, "div": "arith.divui", "max": "arith.maxui", "min": "arith.minui"}
_CMP = {"lt": ("slt", "olt"), "le": ("sle", "ole"), "eq": ("eq", "oeq"), "ne": ("ne", "une"),
        "gt": ("sgt", "ogt"), "ge": ("sge", "oge")}
_EXPR_OPS = {"add", "sub", "mul", "div", "floordiv", "mod", "pow", "neg", "min", "max", "and", "or", "not",
             "select", *_CMP}
_EXPR_ARITY = {"neg": 1, "not": 1, "select": 3}


class _Writer:
    """Writes one kernel as a func.func, statement by statement."""

    def __init__(self, kernel: dict, func_name: Optional[str]):
        self.kernel = kernel
        self.kname = str(kernel.get("name", "?"))
        self.func_name = func_name or self.kname
        span = kernel.get("span") or {}
        self.file = span.get("file", "")
        self.kernel_loc = self._loc(span)
        self.loc = self.kernel_loc
        self.lines: list = []
        self.depth = 2
        self.counter = 0
        self.names: set = set()
        self.tensors: dict = {}        # tensor parameter -> _Buffer
        self.tiles: dict = {}          # tile register (local or tile parameter) -> _Buffer
        self.scalars: dict = {}        # scalar parameter -> (ssa, dtype)
        self.constexprs: dict = {}     # constexpr parameter -> value
        self.scalar_regs: dict = {}    # scalar register -> _Buffer (rank 0)
        self.loop_vars: dict = {}      # loop variable -> i64 ssa

    # -- text --

    def error(self, message: str) -> LoweringError:
        return LoweringError(f"kernel '{self.kname}': {message}")

    def _loc(self, span) -> str:
        if not span:
            return "loc(unknown)"
        return f"loc({_mlir_string(span.get('file', self.file))}:{span['line']}:{span['col'] + 1})"

    def line(self, text: str, depth: Optional[int] = None):
        self.lines.append("  " * (self.depth if depth is None else depth) + text)

    def emit(self, text: str):
        self.line(f"{text} {self.loc}")

    def fresh(self, hint: str = "") -> str:
        """A new SSA name: %<hint> when that is a free identifier, else %<hint>.<n> or %<n>."""
        if hint and _IDENT.match(hint) and hint not in self.names:
            self.names.add(hint)
            return f"%{hint}"
        self.counter += 1
        return f"%{hint}.{self.counter}" if hint and _IDENT.match(hint) else f"%{self.counter}"

    def value(self, text: str) -> str:
        ssa = self.fresh()
        self.emit(f"{ssa} = {text}")
        return ssa

    @contextlib.contextmanager
    def region(self, header: str):
        """`header {` ... `} loc`, with the location current when the region opens."""
        loc = self.loc
        self.line(header + " {")
        self.depth += 1
        yield
        self.depth -= 1
        self.loc = loc
        self.line("} " + loc)

    # -- scalars --

    def const(self, value, dtype: str) -> str:
        if dtype == "i1":
            return self.value(f"arith.constant {'true' if value else 'false'}")
        if dtype in _FLOATS:
            return self.value(f"arith.constant {_float_literal(float(value), dtype)} : {_ELEM[dtype]}")
        bits = _BITS[dtype]
        signed = (int(value) + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))  # u8 255 is i8 -1
        return self.value(f"arith.constant {signed} : {_ELEM[dtype]}")

    def convert(self, v: str, src: str, dst: str) -> str:
        """`v` of dtype `src` as dtype `dst` (a float becomes an integer as float_to_int converts it)."""
        if _ELEM[src] == _ELEM[dst]:
            return v
        s, d = _ELEM[src], _ELEM[dst]
        if src in _FLOATS and dst in _FLOATS:
            if _BITS[src] == _BITS[dst]:  # f16 <-> bf16
                return self.convert(self.convert(v, src, "f32"), "f32", dst)
            op = "arith.extf" if _BITS[dst] > _BITS[src] else "arith.truncf"
            return self.value(f"{op} {v} : {s} to {d}")
        if src in _FLOATS:
            if _BITS[src] < 32:
                return self.convert(self.convert(v, src, "f32"), "f32", dst)
            return self.float_to_int(v, s, dst)
        if dst in _FLOATS:
            if _BITS[dst] < 32:  # through f32, so that bf16 needs no libgcc helper (|v| > 2^24 may round twice)
                return self.convert(self.convert(v, src, "f32"), "f32", dst)
            op = "arith.uitofp" if src in _UNSIGNED else "arith.sitofp"
            return self.value(f"{op} {v} : {s} to {d}")
        if _BITS[dst] > _BITS[src]:
            op = "arith.extui" if src in _UNSIGNED else "arith.extsi"
            return self.value(f"{op} {v} : {s} to {d}")
        return self.value(f"arith.trunci {v} : {s} to {d}")

    def float_to_int(self, v: str, s: str, dst: str) -> str:
        """Float `v` (MLIR type `s`, f32 or f64) as integer dtype `dst`, as NumPy's astype on x86 and both
        simulators convert it (docs/dialects/tile.md, cast): truncated toward zero, through 32 bits for 32 bits
        or fewer (64 for u32); a value the conversion cannot hold, or NaN, is INT32_MIN narrowed (INT64_MIN
        for 64 bits, 0 for u32)."""
        bits = _BITS[dst]
        wide = bits == 64 or (bits == 32 and dst in _UNSIGNED)
        w = "i64" if wide else "i32"
        lo, hi, fallback = ((-2.0 ** 63, 2.0 ** 63, -(1 << 63)) if wide else (-2.0 ** 31, 2.0 ** 31, -(1 << 31)))
        if bits == 32 and dst in _UNSIGNED:
            fallback = 0
        above = self.value(f"arith.cmpf {'ogt' if fallback == 0 else 'oge'}, {v}, "
                           f"{self.value(f'arith.constant {_float_literal(lo, s)} : {s}')} : {s}")
        below = self.value(f"arith.cmpf olt, {v}, {self.value(f'arith.constant {_float_literal(hi, s)} : {s}')} : {s}")
        inside = self.value(f"arith.andi {above}, {below} : i1")
        safe = self.value(f"arith.select {inside}, {v}, {self.value(f'arith.constant 0.0 : {s}')} : {s}")
        converted = self.value(f"arith.fptosi {safe} : {s} to {w}")
        out = self.value(f"arith.select {inside}, {converted}, {self.value(f'arith.constant {fallback} : {w}')} : {w}")
        return out if bits == int(w[1:]) else self.value(f"arith.trunci {out} : {w} to {_ELEM[dst]}")

    def binary(self, kind: str, a: str, b: str, dtype: str) -> str:
        if dtype in _FLOATS:
            table = _FLOAT_BINARY
        else:
            table = _UNSIGNED_BINARY if dtype in _UNSIGNED else _SIGNED_BINARY
        return self.value(f"{table[kind]} {a}, {b} : {_ELEM[dtype]}")

    def unary(self, kind: str, x: str, dtype: str) -> str:
        t = _ELEM[dtype]
        if dtype in _FLOATS:
            if kind in ("exp", "log", "sqrt", "rsqrt", "tanh"):
                return self.value(f"math.{kind} {x} : {t}")
            if kind == "abs":
                return self.value(f"math.absf {x} : {t}")
            if kind == "neg":
                return self.value(f"arith.negf {x} : {t}")
            if kind == "relu":
                return self.binary("max", x, self.const(0.0, dtype), dtype)
            if kind == "recip":
                return self.binary("div", self.const(1.0, dtype), x, dtype)
            # sigmoid: 1 / (1 + e^-x)
            e = self.value(f"math.exp {self.value(f'arith.negf {x} : {t}')} : {t}")
            one = self.const(1.0, dtype)
            return self.binary("div", one, self.binary("add", one, e, dtype), dtype)
        if kind == "abs":
            return x if dtype in _UNSIGNED else self.value(f"math.absi {x} : {t}")
        if kind == "neg":
            return self.binary("sub", self.const(0, dtype), x, dtype)
        if kind == "relu":
            return x if dtype in _UNSIGNED else self.binary("max", x, self.const(0, dtype), dtype)
        raise UnsupportedOp(kind, self.kname, f"'{kind}' takes floating-point tiles, this one is {dtype}")

    # -- scalar expressions (docs/ir-contracts.md §2), computed in i64, f64 or i1 --

    def expr(self, e) -> tuple:
        """(ssa, type) of Expr `e`, the type one of i64, f64, i1."""
        if isinstance(e, bool):
            return self.const(e, "i1"), "i1"
        if isinstance(e, int):
            return self.const(e, "i64"), "i64"
        if isinstance(e, float):
            return self.const(e, "f64"), "f64"
        if not isinstance(e, dict):
            raise self.error(f"malformed scalar expression {e!r}")
        if "var" in e:
            return self.variable(e["var"])
        if "param" in e:
            return self.parameter(e["param"])
        if "read" in e:
            return self.read(e["read"], e.get("index", []))
        if "op" in e:
            return self.operator(e["op"], e.get("args", []))
        raise self.error(f"malformed scalar expression {e!r}")

    def widen(self, v: str, dtype: str) -> tuple:
        """A stored scalar as an expression value: floats as f64, integers as i64."""
        to = "f64" if dtype in _FLOATS else "i64"
        return self.convert(v, dtype, to), to

    def variable(self, name: str) -> tuple:
        if name in self.loop_vars:
            return self.loop_vars[name], "i64"
        if name in self.scalar_regs:
            reg = self.scalar_regs[name]
            return self.widen(self.value(f"memref.load {reg.ssa}[] : {reg.type}"), reg.dtype)
        if name in self.scalars or name in self.constexprs:
            return self.parameter(name)
        raise self.error(f"unknown variable '{name}' in a scalar expression")

    def parameter(self, name: str) -> tuple:
        if name in self.scalars:
            return self.widen(*self.scalars[name])
        if name in self.constexprs:
            value = self.constexprs[name]
            if value is None:
                raise self.error(f"constexpr parameter '{name}' has no value; set its type's 'value' in the "
                                 "kernel's params before lowering")
            if not isinstance(value, (bool, int, float)):
                raise self.error(f"constexpr parameter '{name}' = {value!r} is not a scalar")
            return self.expr(value)
        raise self.error(f"'{name}' is not a scalar or constexpr parameter")

    def read(self, name: str, index: list) -> tuple:
        t = self.tensors.get(name)
        if t is None:
            raise self.error(f"a scalar expression reads '{name}', which is not a tensor parameter")
        if len(index) != len(t.shape):
            raise self.error(f"reading '{name}' takes {len(t.shape)} indices, got {len(index)}")
        idx = ", ".join(self.index(i) for i in index)
        return self.widen(self.value(f"memref.load {t.ssa}[{idx}] : {t.type}"), t.dtype)

    def integer(self, e) -> str:
        v, t = self.expr(e)
        if t == "f64":
            raise self.error(f"expected an integer expression, got the float expression {e!r}")
        return self.convert(v, t, "i64")

    def index(self, e) -> str:
        if isinstance(e, int) and not isinstance(e, bool):
            return self.value(f"arith.constant {e} : index")
        return self.value(f"arith.index_cast {self.integer(e)} : i64 to index")

    def truth(self, v: str, t: str) -> str:
        if t == "i1":
            return v
        if t == "f64":
            return self.value(f"arith.cmpf une, {v}, {self.const(0.0, 'f64')} : f64")
        return self.value(f"arith.cmpi ne, {v}, {self.const(0, 'i64')} : i64")

    def unify(self, values: list) -> tuple:
        """Numeric operands in one type: f64 when any is a float, else i64 (booleans count as 0 / 1)."""
        to = "f64" if any(t == "f64" for _, t in values) else "i64"
        return [self.convert(v, t, to) for v, t in values], to

    @contextlib.contextmanager
    def into(self, lines: list):
        """Emits into `lines` instead of the function body."""
        saved, self.lines = self.lines, lines
        try:
            yield
        finally:
            self.lines = saved

    def branch(self, cond: str, then_expr, else_expr) -> tuple:
        """`then_expr if cond else else_expr` evaluating only the operand taken, as Python does (the other
        may divide by zero or read out of bounds): an scf.if yielding the two values in one type."""
        then_lines, else_lines = [], []
        self.depth += 1
        with self.into(then_lines):
            a, ta = self.expr(then_expr)
        with self.into(else_lines):
            b, tb = self.expr(else_expr)
        t = "i1" if ta == tb == "i1" else "f64" if "f64" in (ta, tb) else "i64"
        with self.into(then_lines):
            self.emit(f"scf.yield {self.convert(a, ta, t)} : {_ELEM[t]}")
        with self.into(else_lines):
            self.emit(f"scf.yield {self.convert(b, tb, t)} : {_ELEM[t]}")
        self.depth -= 1
        result = self.fresh()
        self.line(f"{result} = scf.if {cond} -> ({_ELEM[t]}) {{")
        self.lines += then_lines
        self.line("} else {")
        self.lines += else_lines
        self.line("} " + self.loc)
        return result, t

    def operator(self, op: str, args: list) -> tuple:
        if op not in _EXPR_OPS:
            raise UnsupportedOp(op, self.kname, "unknown scalar-expression operator")
        arity = _EXPR_ARITY.get(op, 2)
        if len(args) != arity:
            raise self.error(f"scalar operator '{op}' takes {arity} operands, got {len(args)}")
        # and / or / select short-circuit (Python's and C++'s semantics): operands after the first are lazy.
        if op == "select":
            return self.branch(self.truth(*self.expr(args[0])), args[1], args[2])
        if op == "and":
            return self.branch(self.truth(*self.expr(args[0])), {"op": "ne", "args": [args[1], 0]}, False)
        if op == "or":
            return self.branch(self.truth(*self.expr(args[0])), True, {"op": "ne", "args": [args[1], 0]})
        values = [self.expr(a) for a in args]
        if op == "not":
            return self.value(f"arith.xori {self.truth(*values[0])}, {self.const(True, 'i1')} : i1"), "i1"
        if op == "neg":
            (x,), t = self.unify(values)
            if t == "f64":
                return self.value(f"arith.negf {x} : f64"), t
            return self.binary("sub", self.const(0, "i64"), x, "i64"), t
        if op == "div":  # true division
            a, b = (self.convert(v, t, "f64") for v, t in values)
            return self.binary("div", a, b, "f64"), "f64"
        (a, b), t = self.unify(values)
        if op in ("add", "sub", "mul", "min", "max"):
            return self.binary(op, a, b, t), t
        if op in _CMP:
            if t == "f64":
                return self.value(f"arith.cmpf {_CMP[op][1]}, {a}, {b} : f64"), "i1"
            return self.value(f"arith.cmpi {_CMP[op][0]}, {a}, {b} : i64"), "i1"
        if op == "floordiv":
            if t == "f64":
                return self.value(f"math.floor {self.binary('div', a, b, t)} : f64"), t
            return self.value(f"arith.floordivsi {a}, {b} : i64"), t
        if op == "mod":
            return self.python_mod(a, b, t), t
        if op == "pow" and t == "f64":
            return self.value(f"math.powf {a}, {b} : f64"), t
        raise UnsupportedOp(op, self.kname, "'**' on runtime integers (dialect-tile folds constant ones)")

    def python_mod(self, a: str, b: str, t: str) -> str:
        """a % b with the sign of b, as Python: the truncated remainder, plus b when the signs differ."""
        if t == "f64":
            r = self.value(f"arith.remf {a}, {b} : f64")
            zero = self.const(0.0, t)
            nonzero = self.value(f"arith.cmpf une, {r}, {zero} : f64")
            r_neg = self.value(f"arith.cmpf olt, {r}, {zero} : f64")
            b_neg = self.value(f"arith.cmpf olt, {b}, {zero} : f64")
        else:
            r = self.value(f"arith.remsi {a}, {b} : i64")
            zero = self.const(0, t)
            nonzero = self.value(f"arith.cmpi ne, {r}, {zero} : i64")
            r_neg = self.value(f"arith.cmpi slt, {r}, {zero} : i64")
            b_neg = self.value(f"arith.cmpi slt, {b}, {zero} : i64")
        differ = self.value(f"arith.xori {r_neg}, {b_neg} : i1")
        fix = self.value(f"arith.andi {nonzero}, {differ} : i1")
        return self.value(f"arith.select {fix}, {self.binary('add', r, b, t)}, {r} : {_ELEM[t]}")

    # -- buffers --

    def tile(self, name, shape=None, dtype=None) -> _Buffer:
        """Tile register `name`, checked against the shape and dtype an op needs when given."""
        if not isinstance(name, str) or name not in self.tiles:
            raise self.error(f"{name!r} is not a tile register")
        buf = self.tiles[name]
        if shape is not None and buf.shape != tuple(shape):
            raise self.error(f"tile '{name}' is {list(buf.shape)}, expected {list(shape)}")
        if dtype is not None and buf.dtype != dtype:
            raise self.error(f"tile '{name}' is {buf.dtype}, expected {dtype}")
        return buf

    def alloc(self, shape, dtype: str) -> _Buffer:
        buf = _Buffer(self.fresh(), tuple(shape), dtype)
        self.emit(f"{buf.ssa} = memref.alloc() : {buf.type}")
        return buf

    def collapse(self, buf: _Buffer) -> _Buffer:
        """A 2-D tile as 1-D (its rows or columns when the other dim is 1)."""
        flat = _Buffer(self.fresh(), (buf.shape[0] * buf.shape[1],), buf.dtype)
        self.emit(f"{flat.ssa} = memref.collapse_shape {buf.ssa} [[0, 1]] : {buf.type} into {flat.type}")
        return flat

    def copy(self, src: _Buffer, dst: _Buffer):
        self.emit(f"linalg.copy ins({src.ssa} : {src.type}) outs({dst.ssa} : {dst.type})")

    def fill(self, value: str, dst: _Buffer):
        self.emit(f"linalg.fill ins({value} : {_ELEM[dst.dtype]}) outs({dst.ssa} : {dst.type})")

    def generic(self, ins: list, maps: list, out: _Buffer, out_map: str, iterators: list, body):
        """linalg.generic: `body(block_args)` (in the operands' element types, `out` last) emits the region
        and returns the value to yield, of `out`'s element type."""
        dims = ", ".join(f"d{i}" for i in range(len(iterators)))
        indexing = ", ".join(f"affine_map<({dims}) -> ({m})>" for m in [*maps, out_map])
        kinds = ", ".join(f'"{k}"' for k in iterators)
        operands = f" ins({', '.join(b.ssa for b in ins)} : {', '.join(b.type for b in ins)})" if ins else ""
        with self.region(f"linalg.generic {{indexing_maps = [{indexing}], iterator_types = [{kinds}]}}"
                         f"{operands} outs({out.ssa} : {out.type})"):
            args = [self.fresh() for _ in [*ins, out]]
            block = ", ".join(f"{a}: {_ELEM[b.dtype]}" for a, b in zip(args, [*ins, out]))
            self.line(f"^bb0({block}):", self.depth - 1)
            self.emit(f"linalg.yield {body(args)} : {_ELEM[out.dtype]}")

    def pointwise(self, dst_name, operands: list, fn, *, result_dtype: Optional[str] = None,
                  same_dtype: bool = True):
        """dst[r, c] = fn(values) over the operands (register, broadcast): broadcast "full" reads [r, c] of a
        [R, C] tile, "row" [r] of a [R, 1] one, "col" [c] of a [1, C] one. The values are in their compute
        types; fn's result is in `result_dtype` (the compute type of dst by default)."""
        dst = self.tile(dst_name)
        rows, cols = dst.shape
        ins, maps = [], []
        for name, how in operands:
            shape, index = {"full": ((rows, cols), "d0, d1"), "row": ((rows, 1), "d0"),
                            "col": ((1, cols), "d1")}[how]
            buf = self.tile(name, shape, dst.dtype if same_dtype else None)
            ins.append(buf if how == "full" else self.collapse(buf))
            maps.append(index)

        def body(args):
            values = [self.convert(a, b.dtype, _compute_dtype(b.dtype)) for a, b in zip(args, ins)]
            return self.convert(fn(values), result_dtype or _compute_dtype(dst.dtype), dst.dtype)

        self.generic(ins, maps, dst, "d0, d1", ["parallel", "parallel"], body)

    # -- statements --

    def function(self) -> str:
        args = []
        for p in self.kernel.get("params", []):
            t = p["type"]
            if t["kind"] == "constexpr":
                self.constexprs[p["name"]] = t.get("value")
        for p in _abi_params(self.kernel):
            ssa = self.fresh(p.name)
            if p.shape is None:
                self.scalars[p.name] = (ssa, p.dtype)
                args.append(f"{ssa}: {_ELEM[p.dtype]}")
                continue
            buf = _Buffer(ssa, p.shape, p.dtype)
            (self.tensors if p.kind == "tensor" else self.tiles)[p.name] = buf
            args.append(f"{ssa}: {buf.type}")
        allocated = []
        for local in self.kernel.get("locals", []):
            name, dtype = local["name"], local["dtype"]
            if local.get("kind", "tile") == "scalar":
                reg = _Buffer(self.fresh(name), (), dtype)
                self.emit(f"{reg.ssa} = memref.alloca() : {reg.type}")
                self.emit(f"memref.store {self.const(0, dtype)}, {reg.ssa}[] : {reg.type}")  # as backend-pto
                self.scalar_regs[name] = reg
            else:
                buf = _Buffer(self.fresh(name), tuple(local["shape"]), dtype)
                self.emit(f"{buf.ssa} = memref.alloc() : {buf.type}")
                self.tiles[name] = buf
                allocated.append(buf)
        self.body(self.kernel.get("body", []))
        self.loc = self.kernel_loc
        for buf in allocated:
            self.emit(f"memref.dealloc {buf.ssa} : {buf.type}")
        self.emit("return")
        symbol = self.func_name if _IDENT.match(self.func_name) else _mlir_string(self.func_name)
        span = self.kernel.get("span") or {}
        where = f" ({span.get('file', '?')}:{span.get('line', '?')})" if span else ""
        return "\n".join([f"// HTP tile kernel '{self.kname}'{where}, lowered by htp.islands.mlir.",
                          "module {",
                          f"  func.func @{symbol}({', '.join(args)}) {{",
                          *self.lines,
                          f"  }} {self.kernel_loc}",
                          "}", ""])

    def body(self, ops: list):
        for op in ops:
            self.statement(op)

    def statement(self, op: dict):
        name = op.get("op")
        if not isinstance(name, str):
            raise self.error(f"a statement without an op: {op!r}")
        self.loc = self._loc(op.get("span"))
        if op.get("set") not in _SETS:
            raise UnsupportedOp(f"{op['set']}.{name}", self.kname,
                                f"intrinsic set '{op['set']}' is not one of tile, pto, aie")
        if name == "for":
            self.for_loop(op)
        elif name == "if":
            self.if_stmt(op)
        elif name == "scalar":
            self.scalar_stmt(op)
        elif name in ("load", "store"):
            self.move(op, name == "load")
        else:
            self.compute(op, name)

    def for_loop(self, op: dict):
        var = op["var"]
        step = op["step"]
        if isinstance(step, bool) or not isinstance(step, int) or step == 0:
            raise UnsupportedOp("for", self.kname, f"the step of loop '{var}' is {step!r}, not a non-zero "
                                "compile-time integer")
        start, stop = self.integer(op["start"]), self.integer(op["stop"])
        outer = self.loop_vars.get(var)
        if step > 0:
            iv = self.fresh(var)
            with self.region(f"scf.for {iv} = {start} to {stop} step {self.const(step, 'i64')} : i64"):
                self.loop_vars[var] = iv
                self.body(op["body"])
        else:  # range(start, stop, -s): max(0, ceil((start - stop) / s)) trips of start - j * s
            distance = self.binary("sub", start, stop, "i64")
            trips = self.value(f"arith.ceildivsi {distance}, {self.const(-step, 'i64')} : i64")
            trips = self.binary("max", trips, self.const(0, "i64"), "i64")
            j, zero, one = self.fresh(), self.const(0, "i64"), self.const(1, "i64")
            with self.region(f"scf.for {j} = {zero} to {trips} step {one} : i64"):
                offset = self.binary("mul", j, self.const(step, "i64"), "i64")
                self.loop_vars[var] = self.binary("add", start, offset, "i64")
                self.body(op["body"])
        if outer is None:
            del self.loop_vars[var]
        else:
            self.loop_vars[var] = outer

    def if_stmt(self, op: dict):
        cond = self.truth(*self.expr(op["cond"]))
        loc = self.loc
        self.line(f"scf.if {cond} {{")
        self.depth += 1
        self.body(op.get("then", []))
        if op.get("else"):
            self.line("} else {", self.depth - 1)
            self.body(op["else"])
        self.depth -= 1
        self.loc = loc
        self.line("} " + loc)

    def scalar_stmt(self, op: dict):
        reg = self.scalar_regs.get(op["dst"])
        if reg is None:
            raise self.error(f"'{op['dst']}' is not a scalar register")
        v, t = self.expr(op["value"])
        self.emit(f"memref.store {self.convert(v, t, reg.dtype)}, {reg.ssa}[] : {reg.type}")

    def move(self, op: dict, load: bool):
        """load: tile dst <- view of tensor src; store: view of tensor dst <- tile value. The view has the
        tile's shape: leading tensor dims of extent 1, a 1-D tensor seen as one row."""
        tensor_name, tile_name = (op["src"], op["dst"]) if load else (op["dst"], op["value"])
        tensor = self.tensors.get(tensor_name)
        if tensor is None:
            raise self.error(f"'{tensor_name}' is not a tensor parameter")
        tile = self.tile(tile_name)
        if tile.dtype != tensor.dtype:
            raise self.error(f"tile '{tile_name}' is {tile.dtype}, tensor '{tensor_name}' {tensor.dtype}")
        offsets = op["offset"]
        rank = len(tensor.shape)
        if len(offsets) != rank:
            raise self.error(f"'{tensor_name}' has {rank} dimensions, the {op['op']} {len(offsets)} offsets")
        rows, cols = tile.shape
        if rank == 1:
            if rows != 1:
                raise self.error(f"a view of the 1-D tensor '{tensor_name}' is one row, tile '{tile_name}' "
                                 f"has {rows}")
            sizes, view_shape, strides = [cols], (cols,), [1]
            tile = self.collapse(tile)
        else:
            sizes, view_shape, strides = [1] * (rank - 2) + [rows, cols], (rows, cols), [tensor.shape[-1], 1]
        for e, size, dim in zip(offsets, sizes, tensor.shape):
            literal = isinstance(e, int) and not isinstance(e, bool)
            if size > dim or (literal and not 0 <= e <= dim - size):
                raise self.error(f"the view [{e}, +{size}) of '{tensor_name}' is outside its {dim} elements")
        index = ", ".join(self.index(e) for e in offsets)
        layout = f"strided<[{', '.join(map(str, strides))}], offset: ?>"
        view = _Buffer(self.fresh(), view_shape, tensor.dtype, layout)
        self.emit(f"{view.ssa} = memref.subview {tensor.ssa}[{index}] [{', '.join(map(str, sizes))}] "
                  f"[{', '.join('1' for _ in sizes)}] : {tensor.type} to {view.type}")
        if load:
            self.copy(view, tile)
        else:
            self.copy(tile, view)

    def compute(self, op: dict, name: str):
        dst = op.get("dst")
        args = op.get("args") or []

        def arity(n: int):
            if len(args) != n:
                raise self.error(f"op '{name}' takes {n} operand{'s' if n > 1 else ''}, got {len(args)}")

        if name in _BINARY or name in _EXPAND_BINARY:
            arity(2)
            axis, kind = _EXPAND_BINARY.get(name, ("full", name))
            ct = _compute_dtype(self.tile(dst).dtype)
            self.pointwise(dst, [(args[0], "full"), (args[1], axis)],
                           lambda v: self.binary(kind, v[0], v[1], ct))
        elif name in _SCALAR_FORMS:
            arity(1)
            if "scalar" not in op:
                raise self.error(f"op '{name}' needs its scalar operand ('scalar')")
            ct = _compute_dtype(self.tile(dst).dtype)
            s = self.convert(*self.expr(op["scalar"]), ct)
            self.pointwise(dst, [(args[0], "full")], lambda v: self.binary(_SCALAR_FORMS[name], v[0], s, ct))
        elif name in _UNARY:
            arity(1)
            ct = _compute_dtype(self.tile(dst).dtype)
            self.pointwise(dst, [(args[0], "full")], lambda v: self.unary(name, v[0], ct))
        elif name in ("rowexpand", "colexpand"):
            arity(1)
            self.pointwise(dst, [(args[0], name[:3])], lambda v: v[0])
        elif name == "cast":
            arity(1)
            src = self.tile(args[0], self.tile(dst).shape)
            self.pointwise(dst, [(args[0], "full")], lambda v: v[0], result_dtype=_compute_dtype(src.dtype),
                           same_dtype=False)
        elif name in _REDUCTIONS:
            arity(1)
            self.reduce(dst, args[0], *_REDUCTIONS[name])
        elif name == "matmul":
            arity(2)
            self.matmul(dst, args[0], args[1], bool(op.get("accumulate", False)))
        elif name == "transpose":
            arity(1)
            a = self.tile(args[0])
            d = self.tile(dst, a.shape[::-1], a.dtype)
            with self.unaliased(d, dst in args, keep=False) as out:
                self.emit(f"linalg.transpose ins({a.ssa} : {a.type}) outs({out.ssa} : {out.type}) "
                          "permutation = [1, 0]")
        elif name == "copy":
            arity(1)
            d = self.tile(dst)
            self.copy(self.tile(args[0], d.shape, d.dtype), d)
        elif name == "full":
            d = self.tile(dst)
            if "value" not in op:
                raise self.error("op 'full' needs its value")
            self.fill(self.convert(*self.expr(op["value"]), d.dtype), d)
        elif name == "alloc":
            self.tile(dst)  # the register is allocated at entry; its contents stay undefined
        else:
            raise UnsupportedOp(name, self.kname)

    @contextlib.contextmanager
    def unaliased(self, dst: _Buffer, aliased: bool, keep: bool):
        """Where an op whose result must not alias its operands writes: `dst`, or, when `dst` is one of them,
        a temporary copied into `dst` afterwards (and initialised from `dst` when `keep`)."""
        if not aliased:
            yield dst
            return
        tmp = self.alloc(dst.shape, dst.dtype)
        if keep:
            self.copy(dst, tmp)
        yield tmp
        self.copy(tmp, dst)
        self.emit(f"memref.dealloc {tmp.ssa} : {tmp.type}")

    def reduce(self, dst_name: str, src_name: str, axis: str, kind: str):
        """dst[r, 0] (rows) or dst[0, c] (columns) = the sum / max / min over src, accumulated in the
        compute type from the operation's identity."""
        src = self.tile(src_name)
        rows, cols = src.shape
        dst = self.tile(dst_name, (rows, 1) if axis == "row" else (1, cols), src.dtype)
        ct = _compute_dtype(src.dtype)
        flat = self.collapse(dst)
        # Accumulate in dst itself unless it needs a wider type or is the operand (a fill would clobber it).
        direct = ct == dst.dtype and dst_name != src_name
        acc = flat if direct else self.alloc(flat.shape, ct)
        if kind == "sum":
            identity = 0
        elif ct in _FLOATS:
            identity = -math.inf if kind == "max" else math.inf
        elif ct in _UNSIGNED:
            identity = 0 if kind == "max" else (1 << _BITS[ct]) - 1
        else:
            identity = -(1 << (_BITS[ct] - 1)) if kind == "max" else (1 << (_BITS[ct] - 1)) - 1
        self.fill(self.const(identity, ct), acc)
        kind_op = {"sum": "add", "max": "max", "min": "min"}[kind]
        self.generic([src], ["d0, d1"], acc, "d0" if axis == "row" else "d1",
                     ["parallel", "reduction"] if axis == "row" else ["reduction", "parallel"],
                     lambda a: self.binary(kind_op, a[1], self.convert(a[0], src.dtype, ct), ct))
        if not direct:
            self.generic([acc], ["d0"], flat, "d0", ["parallel"], lambda a: self.convert(a[0], ct, dst.dtype))
            self.emit(f"memref.dealloc {acc.ssa} : {acc.type}")

    def matmul(self, dst_name: str, a_name: str, b_name: str, accumulate: bool):
        """dst (+)= a @ b; linalg.matmul extends the operands to dst's type (f16/bf16 -> f32, i8 -> i32)."""
        a, b = self.tile(a_name), self.tile(b_name)
        if a.shape[1] != b.shape[0] or a.dtype != b.dtype or a.dtype not in ("f16", "bf16", "f32", "i8"):
            raise self.error(f"matmul of '{a_name}' {list(a.shape)} {a.dtype} and '{b_name}' {list(b.shape)} "
                             f"{b.dtype}")
        dst = self.tile(dst_name, (a.shape[0], b.shape[1]))
        if dst.dtype != ("i32" if a.dtype == "i8" else "f32"):
            raise self.error(f"the product of {a.dtype} tiles is {'i32' if a.dtype == 'i8' else 'f32'}, "
                             f"'{dst_name}' is {dst.dtype}")
        with self.unaliased(dst, dst_name in (a_name, b_name), keep=accumulate) as out:
            if not accumulate:
                self.fill(self.const(0, dst.dtype), out)
            self.emit(f"linalg.matmul ins({a.ssa}, {b.ssa} : {a.type}, {b.type}) outs({out.ssa} : {out.type})")


def kernel_to_mlir(kernel: dict, *, func_name: Optional[str] = None) -> str:
    """MLIR 19 text (a module with one func.func, named ``func_name`` or the kernel's name) for one kernel of
    a ``tile.kernels`` document. Raises ``UnsupportedOp`` for an op without a lowering (foreign ops such as
    ``csp.send``, ops of other intrinsic sets, loops with a runtime step) and ``LoweringError`` for an
    inconsistent kernel."""
    if not isinstance(kernel, dict) or "name" not in kernel:
        raise LoweringError("expected one kernel of a tile.kernels document (an object with a 'name')")
    return _Writer(kernel, func_name).function()


# ---- running --------------------------------------------------------------------------------------------

# NumPy has no bfloat16: a bf16 tensor is its 16-bit words (as htp.bind takes it).
_NUMPY_DTYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "i8": np.int8, "i16": np.int16,
                 "i32": np.int32, "i64": np.int64, "u8": np.uint8}
_CTYPES_SCALARS = {"f32": ctypes.c_float, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
                   "i64": ctypes.c_int64, "u8": ctypes.c_uint8}


class NativeKernel:
    """A kernel built by ``lower_and_build`` (or ``build_native``), loaded with ctypes.

    ``kernel(**arguments)`` takes NumPy arrays for the tensor and tile parameters (C-contiguous, of the
    parameter's dtype and body shape) and numbers for the scalars, by parameter name; it writes ``out`` and
    ``inout`` arrays in place and returns them by name. An ``out`` array left out is allocated (zeros)."""

    def __init__(self, so_path: pathlib.Path, kernel: dict, *, func_name: Optional[str] = None):
        self.kernel = kernel
        self.name = func_name or kernel["name"]
        self.params = _abi_params(kernel)
        argtypes = []
        for p in self.params:
            if p.shape is not None:
                argtypes.append(ctypes.c_void_p)
            elif p.dtype in _CTYPES_SCALARS:
                argtypes.append(_CTYPES_SCALARS[p.dtype])
            else:
                raise TypeError(f"kernel '{self.name}': scalar parameter '{p.name}' is {p.dtype}, which ctypes "
                                "cannot pass")
        self.library = ctypes.CDLL(str(so_path))
        self.function = getattr(self.library, self.name)
        self.function.argtypes = argtypes
        self.function.restype = None

    def __call__(self, **arguments) -> dict:
        unknown = sorted(set(arguments) - {p.name for p in self.params})
        if unknown:
            raise TypeError(f"kernel '{self.name}' has no parameter {', '.join(map(repr, unknown))}")
        values, outputs = [], {}
        for p in self.params:
            if p.shape is None:
                if p.name not in arguments:
                    raise TypeError(f"kernel '{self.name}': missing scalar argument '{p.name}'")
                values.append(arguments[p.name])
                continue
            a = arguments.get(p.name)
            if a is None:
                if p.dir != "out":
                    raise TypeError(f"kernel '{self.name}': missing argument '{p.name}'")
                a = np.zeros(p.shape, _NUMPY_DTYPES[p.dtype])
            self._check(p, a)
            if p.dir != "in":
                outputs[p.name] = a
            values.append(a.ctypes.data)
        self.function(*values)
        return outputs

    def _check(self, p: _AbiParam, a):
        want = np.dtype(_NUMPY_DTYPES[p.dtype])
        if not isinstance(a, np.ndarray):
            raise TypeError(f"argument '{p.name}' must be a NumPy array of {want} ({p.dtype}), "
                            f"got {type(a).__name__}")
        if a.dtype != want:
            raise TypeError(f"argument '{p.name}' is {a.dtype}, parameter '{p.name}' is {p.dtype} ({want})")
        if a.shape != p.shape:
            raise ValueError(f"argument '{p.name}' has shape {list(a.shape)}, parameter '{p.name}' "
                             f"{list(p.shape)}")
        if not a.flags.c_contiguous:
            raise ValueError(f"argument '{p.name}' is not C-contiguous (pass numpy.ascontiguousarray(...))")
        if p.dir != "in" and not a.flags.writeable:
            raise ValueError(f"argument '{p.name}' is an output and must be writeable")
