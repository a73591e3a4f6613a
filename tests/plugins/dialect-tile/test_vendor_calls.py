"""dialect-tile: vendor intrinsic calls in kernels (`vx.exp(t)`, docs/intrinsics.md) with the fixture sets of
fixtures/vendor_sets.cpp — `vx` publishes its contract table, `vn` does not, `vm` publishes a malformed one —
and the check backend.

Each case checks what the tile dialect owns: the obligation at the call's span, the lowered op with its
set, the typing by the portable namesake or by the published contract class, and every diagnostic."""
import ast
import json
import os

import pytest

from test_tile_dialect import CHECK, DIAG, HOST, TILE, ast_program, diagnostics, kernels_of

VENDOR = os.environ.get("HTP_VENDOR_PLUGIN", "")

pytestmark = pytest.mark.skipif(not all(os.path.isfile(p) for p in (HOST, TILE, CHECK, VENDOR)),
                                reason="HTP_HOST_EXE, HTP_TILE_PLUGIN, HTP_CHECK_PLUGIN or HTP_VENDOR_PLUGIN is "
                                       "not built")

import subprocess  # noqa: E402

TEMPLATE = """\
import htp.intrinsics, math
from htp.dialects.tile import *
from htp.intrinsics import vm, vn, vx

{prelude}
@kernel
def k(x: In[Tensor[16, 32, f32]], q: In[Tensor[16, 32, i32]], z: Out[Tensor[16, 32, f32]]):
    t = load(x)
    {body}
"""  # the body starts at line 9, column 5 (the prelude, one line, replaces a blank line)


def compile_vendor(tmp_path, body, name="prog.py", prelude=""):
    prog = tmp_path / name
    prog.write_text(TEMPLATE.format(body=body, prelude=prelude))
    out = tmp_path / "pkg"
    proc = subprocess.run([HOST, "--plugins", TILE, "--plugins", CHECK, "--plugins", VENDOR, "compile", str(prog),
                           "--target", "check", "-o", str(out)], capture_output=True, text=True, timeout=120)
    return proc, out


def ops_of(out):
    (k,) = kernels_of(out)["kernels"]
    return [{key: v for key, v in op.items() if key != "span"} for op in k["body"]], {l["name"]: l for l in k["locals"]}


def obligations(out):
    with open(out / "manifest.json") as f:
        return [(o["capability"], o["span"]["line"], o["span"]["col"]) for o in
                json.load(f)["capabilities"]["obligations"]]


def test_a_vendor_op_with_a_portable_namesake_is_typed_like_it_and_records_its_set(tmp_path):
    proc, out = compile_vendor(tmp_path, "store(z, vx.add(vx.exp(t), t))")
    assert proc.returncode == 0, proc.stderr
    ops, _ = ops_of(out)
    assert ops[1] == {"op": "exp", "set": "vx", "dst": "_t0", "args": ["t"]}
    assert ops[2] == {"op": "add", "set": "vx", "dst": "_t1", "args": ["_t0", "t"]}
    assert ops[0]["op"] == "load" and "set" not in ops[0]  # the portable load keeps no set
    assert ("Uses.Intrinsic(op=add,set=vx)", 9, 13) in obligations(out)
    assert ("Uses.Intrinsic(op=exp,set=vx)", 9, 20) in obligations(out)


def test_the_scalar_form_of_a_vendor_elementwise_op_keeps_the_set(tmp_path):
    proc, out = compile_vendor(tmp_path, "store(z, vx.add(t, 2.0))")
    assert proc.returncode == 0, proc.stderr
    ops, _ = ops_of(out)
    assert ops[1] == {"op": "adds", "set": "vx", "dst": "_t0", "args": ["t"], "scalar": 2.0}


def test_vendor_only_ops_are_typed_by_the_published_contract_class(tmp_path):
    proc, out = compile_vendor(tmp_path, "m = vx.colmax(t)\n    e = vx.colexpand(m, 16)\n"
                                         "    store(z, vx.colexpand_sub(vx.copy(t), m))")
    assert proc.returncode == 0, proc.stderr
    ops, local = ops_of(out)
    assert local["m"]["shape"] == [1, 32] and local["e"]["shape"] == [16, 32]
    assert [(o["op"], o.get("set")) for o in ops] == [("load", None), ("colmax", "vx"), ("colexpand", "vx"),
                                                      ("copy", "vx"), ("colexpand_sub", "vx"), ("store", None)]


def test_alloc_reserves_a_tile_of_the_given_shape_and_dtype(tmp_path):
    proc, out = compile_vendor(tmp_path, "a = vx.alloc((8, 32), f16)\n    store(z, t)")
    assert proc.returncode == 0, proc.stderr
    ops, local = ops_of(out)
    assert ops[1] == {"op": "alloc", "set": "vx", "dst": "a"}
    assert (local["a"]["shape"], local["a"]["dtype"]) == ([8, 32], "f16")


def test_a_set_without_a_table_types_portable_namesakes(tmp_path):
    proc, out = compile_vendor(tmp_path, "store(z, vn.exp(t))")
    assert proc.returncode == 0, proc.stderr
    assert ops_of(out)[0][1] == {"op": "exp", "set": "vn", "dst": "_t0", "args": ["t"]}


BAD = [
    ("store(z, vn.shuffle(t))", "tile.intrinsic-contract",
     "'vn.shuffle' has no portable namesake and intrinsic set 'vn' publishes no contract for it (module attribute "
     "tile.intrinsics.vn, written by the set's plugin; docs/intrinsics.md)", 9, 14),
    ("store(z, vx.rowmax(t))", "tile.intrinsic-contract",
     "intrinsic set 'vx' (plugin 'fixture-vendor') declares 'vx.rowmax' with contract 'unary', but the portable rowmax "
     "is 'row_reduce'", 9, 14),
    ("store(z, vx.extra(t))", "tile.unknown-intrinsic",
     "'vx.extra' is not an op of intrinsic set 'vx' (plugin 'fixture-vendor'), which has: add, alloc, colexpand, "
     "colexpand_sub, colmax, copy, exp, rowmax", 9, 14),
    ("store(z, cast(vx.exp(load(q)), f32))", "tile.dtype-mismatch",
     "exp needs a floating-point tile (f16, bf16, f32); 'load(...)' (Tile[16, 32, i32]) is not: cast it first", 9, 19),
    ("store(z, vx.colexpand(t, 16))", "tile.shape-mismatch",
     "colexpand expands a [1, C] tile (e.g. a colsum) over rows; 't' (Tile[16, 32, f32]) is not [1, C]", 9, 27),
    ("store(z, vx.colexpand_sub(t, t))", "tile.shape-mismatch",
     "colexpand_sub combines a [R, C] tile with a [1, C] tile: 't' (Tile[16, 32, f32]) needs 's' of shape [1, 32], got "
     "'t' (Tile[16, 32, f32])", 9, 14),
    ("store(z, vx.exp(t, t))", "tile.arity", "exp takes 1 argument, got 2: exp(a)", 9, 14),
    ("store(z, vm.exp(t))", "tile.intrinsic-contract",
     "the contract table of intrinsic set 'vm' (module attribute tile.intrinsics.vm) is malformed: op 'exp' names the "
     "unknown contract class 'sparkle' (known: elementwise, scalar_form, unary, row_reduce, col_reduce, row_expand, "
     "row_expand_binary, matmul, cast, load, store, full, col_expand, col_expand_binary, copy, alloc, transpose)", 9, 14),
]


@pytest.mark.parametrize("body,code,message,line,col", BAD, ids=[b[1] + ":" + b[0] for b in BAD])
def test_bad_vendor_call_is_diagnosed_at_the_call(tmp_path, body, code, message, line, col):
    proc, out = compile_vendor(tmp_path, body)
    assert proc.returncode != 0
    found = [d for d in diagnostics(proc) if d["code"] == code]
    assert found, proc.stderr
    assert found[0]["msg"] == message
    assert (int(found[0]["line"]), int(found[0]["col"])) == (line, col)
    assert not out.exists()


def test_an_op_the_set_does_not_register_is_a_resolver_error_naming_its_ops(tmp_path):
    proc, _ = compile_vendor(tmp_path, "store(z, vx.expp(t))")
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert lines[0].endswith("prog.py:9:14: error: Uses.Intrinsic(op=expp,set=vx) needs intrinsic-set 'vx' with op "
                             "'expp', which is not loaded [resolve.unmet]"), proc.stderr
    assert lines[1] == ("  note: nearly: intrinsic-set 'vx.intrinsics' (plugin 'fixture-vendor' 1.0.0) has no op 'expp' "
                        "(it has: exp, add, colexpand, colexpand_sub, colmax, alloc, copy, rowmax, extra)")


def test_a_module_call_of_an_unknown_set_is_a_resolver_error(tmp_path):
    proc, _ = compile_vendor(tmp_path, "store(z, htp.intrinsics.nosuch.exp(t))")
    assert proc.returncode != 0
    (d,) = [d for d in diagnostics(proc) if d["code"] == "resolve.unmet"]
    assert d["msg"] == ("Uses.Intrinsic(op=exp,set=nosuch) needs intrinsic-set 'nosuch' with op 'exp', which is not "
                        "loaded")
    assert (d["line"], d["col"]) == ("9", "14")


def test_a_python_module_call_is_no_intrinsic(tmp_path):
    # The capture records that `math` is Python's module: the tile dialect reports the call, not the resolver.
    proc, _ = compile_vendor(tmp_path, "store(z, math.exp(t))")
    assert proc.returncode != 0
    (d,) = [d for d in diagnostics(proc) if d["code"] == "tile.call"]
    assert d["msg"].startswith("call of 'math.exp' is not supported in tile bodies"), d["msg"]
    assert (d["line"], d["col"]) == ("9", "14")
    assert not [d for d in diagnostics(proc) if d["code"].startswith("resolve.")]


def test_a_set_bound_under_an_alias_is_that_set(tmp_path):
    proc, out = compile_vendor(tmp_path, "store(z, V.exp(t))", prelude="from htp.intrinsics import vx as V")
    assert proc.returncode == 0, proc.stderr
    ops, _ = ops_of(out)
    assert ops[1] == {"op": "exp", "set": "vx", "dst": "_t0", "args": ["t"]}
    assert ("Uses.Intrinsic(op=exp,set=vx)", 9, 13) in obligations(out)  # manifest columns are 0-based


def test_locals_views_and_captured_constants_are_not_intrinsic_sets(tmp_path):
    # `x.tile(...)` is a view method of a parameter: no obligation, no vendor op.
    proc, out = compile_vendor(tmp_path, "store(z, vx.exp(load(x.tile(0, 0, shape=(16, 32)))))")
    assert proc.returncode == 0, proc.stderr
    assert sorted(c for c, _, _ in obligations(out) if "set=" in c) == [
        "Uses.Intrinsic(op=exp,set=vx)", "Uses.Intrinsic(op=load,set=tile)", "Uses.Intrinsic(op=load,set=tile)",
        "Uses.Intrinsic(op=store,set=tile)"]


def test_other_dialects_functions_name_vendor_sets_through_the_intrinsics_package(tmp_path):
    src = ("def w(x, y):\n"
           "    a = vx.exp(x)\n"                   # a lone module name is not a set outside kernels (P.seq, ...)
           "    b = htp.intrinsics.vx.exp(y)\n")
    out = tmp_path / "pkg"
    prog = ast_program(tmp_path, src, lambda n: {"htp.dialect": "wsp"} if isinstance(n, ast.FunctionDef) else None)
    proc = subprocess.run([HOST, "--plugins", TILE, "--plugins", CHECK, "--plugins", VENDOR, "compile", prog,
                           "--target", "check", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(out / "manifest.json") as f:
        caps = [(o["capability"], o["span"]["line"]) for o in json.load(f)["capabilities"]["obligations"]]
    assert sorted(caps) == [("Uses.Dialect(name=tile)", 3), ("Uses.Intrinsic(op=exp,set=vx)", 3)]
