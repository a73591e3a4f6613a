"""What a Python user sees when something is wrong: htp.CompileError / htp.RunError carry the structured
diagnostics and a traceback that ends at the user's line; pass warnings arrive as Python warnings at their
span; an unmet optional requirement is not reported; and an extension is added to the built-in plugins."""
import os
import re
import json
import subprocess
import sys
import traceback
import warnings

import numpy as np
import pytest

import htp
from htp.dialects.tile import In, Out, Tensor, add, adds, f32, kernel, load, store
from htp.dialects.csp import Channel, recv, send
from htp.dialects.wsp import P, workload

HERE = os.path.abspath(__file__)


def line_of(text: str) -> int:
    with open(HERE, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if text in line and "line_of(" not in line)


@kernel
def bad_kernel(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]]):
    store(z, add(load(x), undefined_name))  # noqa: F821 - the error under test


@workload
def bad_workload(A: In[Tensor[16, 16, f32]], C: Out[Tensor[16, 16, f32]]):
    for i in P(1):
        bad_kernel[i](A, C)


@kernel
def warned_kernel(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]]):
    for _ in range(0):
        pass  # the empty loop is the warning under test
    store(z, load(x))


@workload
def warned_workload(A: In[Tensor[16, 16, f32]], C: Out[Tensor[16, 16, f32]]):
    for i in P(1):
        warned_kernel[i](A, C)


@kernel
def good_kernel(x: In[Tensor[16, 16, f32]], y: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]]):
    store(z, add(load(x), load(y)))


@workload
def good_workload(A: In[Tensor[16, 16, f32]], B: In[Tensor[16, 16, f32]], C: Out[Tensor[16, 16, f32]]):
    for i in P(1):
        good_kernel[i](A, B, C)


@pytest.fixture(scope="module")
def ctx():
    return htp.Context()


def test_compile_error_carries_structured_diagnostics(ctx, tmp_path):
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(bad_workload, target="pto-a2a3sim", out=tmp_path / "p")
    err = e.value
    assert err.diagnostics and isinstance(err.diagnostics[0], htp.Diagnostic)
    d = err.errors[0]
    assert d.severity == "error" and d.code and "undefined_name" in d.message
    assert d.span["file"] == HERE and d.span["line"] == line_of("undefined_name))")
    assert d["code"] == d.code  # also a dict, as CaptureError's diagnostics always were
    first = str(err).splitlines()[0]
    assert first.startswith(f"{HERE}:{d.span['line']}:") and ": error: " in first


def test_compile_error_traceback_ends_at_the_users_line(ctx, tmp_path):
    try:
        ctx.compile(bad_workload, target="pto-a2a3sim", out=tmp_path / "p")
    except htp.CompileError as e:
        last = traceback.extract_tb(e.__traceback__)[-1]
    assert (last.filename, last.lineno) == (HERE, line_of("undefined_name))"))
    assert "undefined_name" in last.line


def test_optional_requirement_is_not_news(ctx, tmp_path):
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(bad_workload, target="pto-a2a3sim", out=tmp_path / "p")
    assert "optional requirement" not in str(e.value)
    assert all(d.severity != "note" for d in e.value.diagnostics)


def test_pass_warning_is_a_python_warning_at_its_span(ctx, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ctx.compile(warned_workload, target="pto-a2a3sim", out=tmp_path / "p")
    ours = [w for w in caught if issubclass(w.category, htp.CompileWarning)]
    assert ours, [str(w.message) for w in caught]
    w = ours[0]
    assert "[tile.empty-loop]" in str(w.message) and w.message.diagnostic.code == "tile.empty-loop"
    assert (w.filename, w.lineno) == (HERE, line_of("for _ in range(0):"))


def test_run_error_carries_diagnostics(ctx, tmp_path):
    pkg = ctx.compile(good_workload, target="pto-a2a3sim", out=tmp_path / "p")
    a = np.ones((16, 16), np.float32)
    with pytest.raises(htp.RunError) as e:
        htp.bind(pkg, ctx).run(A=a, B=a, bogus=a, cache_dir=tmp_path / "cache")
    assert "has no parameter 'bogus'" in str(e.value)
    assert [d.code for d in e.value.errors] == ["run.argument"]


def test_plugin_error_carries_diagnostics(tmp_path):
    bad = tmp_path / "htp-bad.so"
    bad.write_bytes(b"not a library")
    with pytest.raises(htp.PluginError) as e:
        htp.Context([str(bad)])
    assert e.value.errors and "htp-bad" in str(e.value)


def test_extension_is_added_to_the_builtins():
    toy = os.environ["HTP_TOY_PLUGIN"]
    names = {p["name"] for p in htp.Context([toy]).plugins()}
    assert "fixture-toy" in names and "dialect-tile" in names
    only = {p["name"] for p in htp.Context([toy], builtins=False).plugins()}
    assert only == {"fixture-toy"}


def cli(*args):
    return subprocess.run([os.environ["HTP_HOST_EXE"], *args], capture_output=True, text=True, check=False)


def test_cli_plugins_adds_to_the_builtins():
    toy = os.environ["HTP_TOY_PLUGIN"]
    added = cli("--plugins", toy, "plugins", "list")
    assert added.returncode == 0, added.stderr
    assert "fixture-toy" in added.stdout and "dialect-tile" in added.stdout
    exact = cli("--no-builtin-plugins", "--plugins", toy, "plugins", "list")
    assert exact.returncode == 0, exact.stderr
    assert "fixture-toy" in exact.stdout and "dialect-tile" not in exact.stdout


def test_cli_plugin_named_like_a_builtin_replaces_it(tmp_path):
    builtin = htp._htp.builtin_plugin_dir()
    copy = tmp_path / "htp-dialect-tile.so"
    copy.write_bytes(open(os.path.join(builtin, "htp-dialect-tile.so"), "rb").read())
    manifest = os.path.join(builtin, "htp-dialect-tile.plugin.json")
    (tmp_path / "htp-dialect-tile.plugin.json").write_bytes(open(manifest, "rb").read())
    r = cli("--plugins", str(copy), "plugins", "list", "--json")
    assert r.returncode == 0, r.stderr
    paths = [p["path"] for p in json.loads(r.stdout)["plugins"] if p["name"] == "dialect-tile"]
    assert paths == [str(copy)]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


# Misuses a user makes that surfaced as Python internals (IndexError, NumPy's truth-value error, pybind11 printing
# the module's JSON) or passed silently (a --dump-ir naming no pass of the plan).
def test_misused_calls_are_named(ctx, tmp_path):
    with pytest.raises(htp.CaptureError, match=r"nothing to compile"):
        ctx.compile([], "pto-a2a3sim", tmp_path / "empty")
    with pytest.raises(TypeError, match=r"target is a target name such as 'pto-a2a3sim'.*got NoneType"):
        ctx.compile(good_workload, None, tmp_path / "none")
    bound = htp.bind(ctx.compile(good_workload, "pto-a2a3sim", tmp_path / "p"), ctx)
    a = np.ones((16, 16), np.float32)
    with pytest.raises(htp.ArgumentTypeError, match=r"run\(\) takes tensors and scalars by parameter name.*got a ndarray"):
        bound.run(a, B=a)
    with pytest.raises(FileNotFoundError, match=r"is not an HTP package \(no such directory\)"):
        htp.bind(tmp_path / "missing", ctx)
    with pytest.raises(FileNotFoundError, match=r"is not an HTP package \(it has no manifest.json\)"):
        htp.bind(tmp_path, ctx)
    with pytest.warns(htp.CompileWarning, match=r"--dump-ir names 'tile.lowr', which this plan does not run.*tile.lower"):
        ctx.compile(good_workload, "pto-a2a3sim", tmp_path / "d", dump_ir="tile.lowr")


# A store whose view is already an error (out of bounds) also drew a false "Out parameter 'y' ... is never written".
@kernel
def overreaching(x: In[Tensor[32, 32, f32]], y: Out[Tensor[32, 32, f32]]):
    for i in range(3):
        t = load(x.tile(i, 0, shape=(16, 32)))
        store(y.tile(i, 0, shape=(16, 32)), t)


def test_a_bad_view_in_a_store_is_not_also_an_unwritten_output(ctx, tmp_path):
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(overreaching, "pto-a2a3sim", tmp_path / "p")
    assert [d.code for d in e.value.errors] == ["tile.view-out-of-bounds"] * 2


# full() with a value its integer dtype cannot hold filled a wrapped or truncated value silently on both targets.
from htp.dialects.tile import full, i8, i32  # noqa: E402


@kernel
def full_out_of_range(z: Out[Tensor[4, 32, i8]], w: Out[Tensor[4, 32, i32]], v: Out[Tensor[4, 32, i32]]):
    store(z, full((4, 32), 300, dtype=i8))
    store(w, full((4, 32), 2.7, dtype=i32))
    store(v, full((4, 32), 2.0, dtype=i32))  # (an integral float is fine)


def test_full_of_a_value_its_dtype_cannot_hold_is_an_error(ctx, tmp_path):
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(full_out_of_range, "pto-a2a3sim", tmp_path / "p")
    assert [(d.code, d.span["line"] - line_of("def full_out_of_range")) for d in e.value.errors] == [
        ("tile.value-range", 1), ("tile.dtype-mismatch", 2)]
    assert "full: 300 is outside the range of i8 [-128, 127]" in e.value.errors[0].message


# After an unsupported loop form (reversed, while, enumerate, ...) the checker does not enter the loop, and it
# reported the Out parameter the loop stores as never written too.
@kernel
def reversed_rows(x: In[Tensor[64, 32, f32]], z: Out[Tensor[64, 32, f32]]):
    for i in reversed(range(4)):
        store(z.tile(i, 0, shape=(16, 32)), load(x.tile(i, 0, shape=(16, 32))))


def test_an_unsupported_loop_is_not_also_an_unwritten_output(ctx, tmp_path):
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(reversed_rows, "pto-a2a3sim", tmp_path / "p")
    assert [d.code for d in e.value.errors] == ["tile.unsupported"]


# Integer constants whose product leaves 64 bits stayed unfolded and wrapped at run time (BIG * BIG was 0).
BIG = 2**40


@kernel
def overflowing_constant(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]]):
    store(z, adds(load(x), BIG * BIG // BIG // 2**39))


@workload
def overflowing_extent(A: In[Tensor[16, 16, f32]], C: Out[Tensor[16, 16, f32]]):
    for i in P(BIG * BIG // BIG // BIG):
        good_kernel[i](A, A, C)


def test_a_constant_expression_leaving_64_bits_is_an_error(ctx, tmp_path):
    for fn, code in ((overflowing_constant, "tile.overflow"), (overflowing_extent, "wsp.expr")):
        with pytest.raises(htp.CompileError, match=r"'\*' of the constants 1099511627776 and 1099511627776 overflows "
                                                   r"64 bits") as e:
            ctx.compile(fn, "pto-a2a3sim", tmp_path / fn.__name__)
        assert e.value.errors[0].code == code


# A register assigned only inside an `if` branch, or a loop that may run zero times, and read after it compiled
# silently and read whatever its storage held (zeros); it is now a tile.maybe-unassigned warning at the read.
from htp.dialects.tile import Scalar, i32  # noqa: E402


@kernel
def assigned_in_a_branch(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]], n: Scalar[i32]):
    t = load(x)
    if n > 0:
        u = adds(t, 1.0)
    store(z, u)


@kernel
def assigned_in_a_loop(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]], n: Scalar[i32]):
    for i in range(n):
        u = load(x)
    store(z, u)


@kernel
def assigned_on_every_path(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]], n: Scalar[i32]):
    t = load(x)
    if n > 0:
        u = adds(t, 1.0)
    else:
        u = t
    for i in range(2):
        v = adds(u, 1.0)
    store(z, v)


def test_a_register_assigned_on_some_paths_only_is_a_warning_at_the_read(ctx, tmp_path):
    for fn, expect in ((assigned_in_a_branch, True), (assigned_in_a_loop, True), (assigned_on_every_path, False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctx.compile(fn, "pto-a2a3sim", tmp_path / fn.__name__)
        hits = [str(w.message) for w in caught if "tile.maybe-unassigned" in str(w.message)]
        assert bool(hits) == expect, (fn.__name__, hits)
        if expect:
            assert "'u' is read here but assigned only on some paths before it" in hits[0]


# Messages for Python a user writes: float(n) suggested 'load'; a loop variable read after its loop said it was
# "used before it is assigned".
@kernel
def float_of_scalar(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]], n: Scalar[i32]):
    store(z, adds(load(x), float(n)))


@kernel
def loop_variable_after_loop(x: In[Tensor[16, 16, f32]], z: Out[Tensor[16, 16, f32]]):
    for i in range(3):
        t = load(x)
    store(z, adds(t, i))


def test_messages_for_python_conversions_and_ended_loop_variables(ctx, tmp_path):
    for fn, text in ((float_of_scalar, "'float' is not a tile intrinsic: scalars convert where they are used"),
                     (loop_variable_after_loop, "'i' is the variable of the loop at line")):
        with pytest.raises(htp.CompileError, match=re.escape(text)):
            ctx.compile(fn, "pto-a2a3sim", tmp_path / fn.__name__)


# A pipe stage binding a received item to a name: the message said only that calls are limited to min and max.
@kernel
def fill_item(x: In[Tensor[16, 64, f32]], item: Out[Tensor[16, 64, f32]]):
    store(item, load(x))


@kernel
def drain_item(item: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]]):
    store(y, load(item))


@workload
def pipe_with_named_item(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[64, 64, f32]]):
    a = Channel[Tensor[16, 64, f32]](depth=2)
    with P.pipe():
        for i in P.seq(4):
            send(a, fill_item[i](X.tile(i, 0)))
        for i in P.seq(4):
            t = recv(a)
            drain_item[i](t, Y.tile(i, 0))


def test_a_received_item_bound_to_a_name_in_a_pipe_says_how_to_pass_it(ctx, tmp_path):
    with pytest.raises(htp.CompileError, match=re.escape("a received item is not a workload value that a name can "
                                                         "hold: pass recv(ch) directly as a launch argument")):
        ctx.compile(pipe_with_named_item, "pto-a2a3sim", tmp_path / "pkg")


# A program file holding a NUL byte: Python's compile() refuses it with ValueError, which capture showed as a
# traceback from htp/capture.py ("Capture never shows a Python traceback", python.md).
def test_a_nul_byte_in_the_program_is_a_located_syntax_error(tmp_path):
    from htp.capture import capture_file

    prog = tmp_path / "nul.py"
    prog.write_bytes(b"x = 1\ny = \x002\n")
    doc, diags = capture_file(str(prog))
    assert doc is None
    [d] = diags
    assert d["code"] == "capture.syntax" and (d["span"]["line"], d["span"]["col"]) == (2, 4), d
    assert "null bytes" in d["message"]

