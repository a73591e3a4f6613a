"""Extensions written in Python (htp.extension): passes that the resolver selects, orders and explains with
the C++ ones, whose rewrites the host's driver runs and records, pinned by the sha256 of their source in the
plan, lockfile and manifest; loaded from Python (htp.Context) and from htp-host (--plugins ext.py); and every
bad input of the issue turned into a diagnostic that says what and where."""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import htp

HOST = os.environ.get("HTP_HOST_EXE")

# A program written as a user would: a scale by a captured constant, then a row sum.
PROGRAM = '''
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, divs, rowsum
from htp.dialects.wsp import workload, P

D = 4.0


@kernel
def scale_rows(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]], s: Out[Tensor[16, 1, f32]]):
    t = divs(load(x), D)
    store(y, t)
    store(s, rowsum(t))


@workload
def scale(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[64, 64, f32]], S: Out[Tensor[64, 1, f32]]):
    for i in P(4):
        scale_rows[i](X.tile(i, 0), Y.tile(i, 0), S.tile(i, 0))
'''

# The extension under test: divs by a constant -> muls by its reciprocal.
EXTENSION = '''
from htp.extension import Extension

ext = Extension("recip", version="1.2.0", summary="divs(t, c) -> muls(t, 1/c)")


@ext.pattern_pass("user.divs-to-muls", roots=["Call"], stage="canonicalize", provides=["IR.StrengthReduced"],
                  applies_to=["Uses.Dialect(name=tile)"], after=["tile.fold"], before=["tile.typecheck"])
def divs_to_muls(node, rw):
    if node.func.type != "Name" or node.func.id != "divs" or len(node.args) != 2:
        return False
    c = node.args[1]
    if c.type != "Constant" or not isinstance(c.value, float) or c.value == 0.0:
        return False
    rw.replace(node, rw.expr("muls(t, r)", at=node, t=node.args[0], r=1.0 / c.value))
    return True
'''


def load_module(path: pathlib.Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "user_program.py"
    path.write_text(PROGRAM)
    return load_module(path, "user_program")


def write_extension(tmp_path, text=EXTENSION, name="recip_ext.py") -> pathlib.Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def trace_of(pkg):
    events = [json.loads(line) for line in (pkg.path / "ir" / "pass_trace.jsonl").read_text().splitlines()]
    return {e["pass"]: e for e in events}


def kernel_code(pkg) -> str:
    return "".join((pkg.path / p).read_text() for p in pkg.files if p.startswith("codegen/") and "scale_rows" in p)


def run_and_check(ctx, pkg):
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    r = htp.bind(pkg, ctx).run(X=x)
    np.testing.assert_allclose(r["Y"], x / 4.0, rtol=1e-6)
    np.testing.assert_allclose(r["S"], (x / 4.0).sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-5)


# ---- composition ------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_python_pass_is_selected_ordered_between_cpp_passes_and_changes_the_code(tmp_path, program, target):
    ext = write_extension(tmp_path)
    plain = htp.Context().compile(program.scale, target, tmp_path / "plain")
    ctx = htp.Context(plugins=[ext])
    pkg = ctx.compile(program.scale, target, tmp_path / "pkg", dump_ir="all")
    passes = pkg.passes
    assert "user.divs-to-muls" not in plain.passes
    assert passes.index("tile.fold") < passes.index("user.divs-to-muls") < passes.index("tile.typecheck")
    assert "muls(load(x), 0.25)" in pkg.dump("user.divs-to-muls")
    assert "divs(load(x), 4.0)" in pkg.dump("tile.fold")
    # The generated kernel multiplies; without the extension it divides (pto: TMULS/TDIVS; aie: `* 0.25`/`/ 4`).
    mul, div = {"pto-a2a3sim": ("TMULS(", "TDIVS("), "aie-npu1": ("(0.25)", "(4.0)")}[target]
    assert mul in kernel_code(pkg) and div not in kernel_code(pkg)
    assert div in kernel_code(plain) and mul not in kernel_code(plain)
    run_and_check(ctx, pkg)


def test_rewrites_of_a_python_pattern_are_in_the_pass_trace_with_their_span(tmp_path, program):
    ctx = htp.Context(plugins=[write_extension(tmp_path)])
    pkg = ctx.compile(program.scale, "pto-a2a3sim", tmp_path / "pkg", dump_ir="all")
    event = trace_of(pkg)["user.divs-to-muls"]
    assert event["plugin"] == "recip" and event["ok"]
    assert [r["pattern"] for r in event["rewrites"]] == ["divs-to-muls"]
    span = event["rewrites"][0]["span"]
    assert span["file"].endswith("user_program.py") and span["line"] == PROGRAM.splitlines().index(
        "    t = divs(load(x), D)") + 1


def test_sha256_of_the_source_is_in_plan_lockfile_and_manifest(tmp_path, program):
    ext = write_extension(tmp_path)
    digest = hashlib.sha256(ext.read_bytes()).hexdigest()
    pkg = htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    [entry] = [p for p in pkg.manifest["plugins"] if p["name"] == "recip"]
    assert entry == {"name": "recip", "version": "1.2.0", "sha256": digest, "language": "python",
                     "source": str(ext.resolve())}
    [comp] = [c for c in pkg.manifest["plan"]["components"] if c["id"] == "user.divs-to-muls"]
    assert comp["plugin"]["sha256"] == digest and comp["plugin"]["language"] == "python"
    lock = json.loads((pkg.path / "htp.lock.json").read_text())
    [locked] = [p for p in lock["plugins"] if p["name"] == "recip"]
    assert locked["sha256"] == digest and locked["path"] == str(ext.resolve()) and locked["language"] == "python"


def test_an_edited_extension_fails_a_locked_compile(tmp_path, program):
    ext = write_extension(tmp_path)
    pkg = htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    lock = tmp_path / "htp.lock.json"
    lock.write_text((pkg.path / "htp.lock.json").read_text())
    # The same source reproduces the plan.
    htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "again", locked=lock)
    ext.write_text(ext.read_text() + "\n# tuned\n")
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "edited", locked=lock)
    [d] = [d for d in e.value.diagnostics if d.code == "lock.plugin-hash"]
    assert "plugin 'recip' 1.2.0 is locked with sha256" in d.message
    assert any("Python extension's source" in n.message and str(ext.resolve()) in n.message for n in d.notes)
    assert not (tmp_path / "edited").exists()


def test_a_module_object_loads_like_a_file(tmp_path, program):
    module = load_module(write_extension(tmp_path), "recip_module")
    ctx = htp.Context(plugins=[module])
    [p] = [p for p in ctx.plugins() if p["name"] == "recip"]
    assert p["language"] == "python" and p["components"] == ["user.divs-to-muls"]
    assert "user.divs-to-muls" in ctx.compile(program.scale, "pto-a2a3sim", tmp_path / "pkg").passes


def test_a_module_body_a_finish_body_and_a_python_pipeline(tmp_path, program):
    ext = write_extension(tmp_path, '''
        import json
        from htp.extension import Extension

        ext = Extension("inventory", version="0.3.0")
        count = ext.pass_("user.count-calls", stage="analyze", provides=["IR.CallCount"],
                          applies_to=["Uses.Dialect(name=tile)"])
        seen = []

        @count.module
        def start(rw):
            seen.clear()

        @count.pattern("Call")
        def record(node, rw):
            seen.append(node.func.get("id") if node.func.type == "Name" else node.func.type)
            return False

        @count.finish
        def publish(rw):
            rw.set_module_attr("user.calls", sorted(seen))

        ext.pipeline("user.pto-with-inventory", targets=["pto-a2a3sim"],
                     passes=["tile.fold", "wsp.canonicalize", "user.count-calls", "tile.typecheck", "wsp.typecheck",
                             "wsp.attach-schedule", "wsp.build-task-graph", "tile.lower", "pto.legalize", "pto.emit"])
    ''')
    # (a pass with a module body and a finish body was refused, "either a module body or a finish body", as a
    # bare ValueError; the module body runs first, the patterns, then the finish body: each compile counts
    # afresh)
    ctx = htp.Context(plugins=[ext])
    assert [c["id"] for c in ctx.components("pipeline") if c["plugin"] == "inventory"] == ["user.pto-with-inventory"]
    for out in ("pkg", "again"):
        pkg = ctx.compile(program.scale, "pto-a2a3sim", tmp_path / out, pipeline="user.pto-with-inventory",
                          dump_ir="all")
        assert pkg.passes.index("user.count-calls") == 2
        dump = json.loads((pkg.path / "ir" / "03_user.count-calls.ast.json").read_text())
        assert dump["attrs"]["user.calls"] == sorted(["P", "Subscript", "Attribute", "Attribute", "Attribute",
                                                      "divs", "load", "rowsum", "store", "store"])


# ---- the command line -------------------------------------------------------------------------------


@pytest.mark.skipif(not HOST, reason="HTP_HOST_EXE is not set (run through ctest)")
def test_htp_host_loads_a_python_extension_explains_and_compiles_with_it(tmp_path):
    ext = write_extension(tmp_path)
    prog = tmp_path / "user_program.py"
    prog.write_text(PROGRAM)
    explain = subprocess.run([HOST, "--plugins", str(ext), "resolve", "--target", "pto-a2a3sim", "--uses",
                              "Uses.Dialect(name=tile)", "--explain"], capture_output=True, text=True)
    assert explain.returncode == 0, explain.stderr
    assert "user.divs-to-muls 1.2.0" in explain.stdout
    assert "user.divs-to-muls declares after tile.fold" in explain.stdout
    assert "pass user.divs-to-muls [applies-to]" in explain.stdout
    out = tmp_path / "cli"
    r = subprocess.run([HOST, "--plugins", str(ext), "compile", str(prog), "--target", "pto-a2a3sim", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert any(p["name"] == "recip" and p["language"] == "python" for p in manifest["plugins"])
    assert "TMULS(" in "".join(p.read_text() for p in (out / "codegen").rglob("scale_rows*"))
    # verify checks the recorded digest of the extension's source like a plugin file's.
    ok = subprocess.run([HOST, "--plugins", str(ext), "verify", str(out)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    ext.write_text(ext.read_text() + "\n# edited\n")
    bad = subprocess.run([HOST, "--plugins", str(ext), "verify", str(out)], capture_output=True, text=True)
    assert bad.returncode == 1 and "plugin 'recip' 1.2.0 differs from the one the package was built with" in bad.stderr
    assert "[package.plugin-hash]" in bad.stderr


@pytest.mark.skipif(not HOST, reason="HTP_HOST_EXE is not set (run through ctest)")
def test_htp_host_reports_an_extension_that_fails_to_import_at_its_line(tmp_path):
    ext = write_extension(tmp_path, "from htp.extension import Extension\n\nraise RuntimeError('no GPU here')\n")
    r = subprocess.run([HOST, "--plugins", str(ext), "plugins", "list"], capture_output=True, text=True)
    assert r.returncode != 0
    assert f"{ext}:3:1: error: Python extension '{ext}' raised RuntimeError: no GPU here [python.import]" in r.stderr


@pytest.mark.skipif(not HOST, reason="HTP_HOST_EXE is not set (run through ctest)")
def test_safe_plugins_skips_a_python_extension_that_hangs_aborts_or_crashes_on_import(tmp_path):
    # cli.md: --safe-plugins probes every plugin in a child process and skips, with a warning, those that crash,
    # abort, hang or fail. A Python extension was imported in htp-host itself: one looping on import hung it,
    # one aborting took it down.
    good = write_extension(tmp_path)
    bodies = {"hang": "while True:\n    pass\n", "abort": "import os\nos.abort()\n",
              "segv": "import ctypes\nctypes.string_at(0)\n"}
    bad = {}
    for name, body in bodies.items():
        bad[name] = tmp_path / f"{name}_ext.py"
        bad[name].write_text(f"from htp.extension import Extension\next = Extension('{name}')\n{body}")
    args = [HOST, "--safe-plugins", "--probe-timeout-ms", "3000", "--probe-cache", str(tmp_path / "probes.json")]
    for ext in bad.values():
        args += ["--plugins", str(ext)]
    r = subprocess.run(args + ["--plugins", str(good), "plugins", "list"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "recip" in r.stdout  # the good extension loads
    assert f"warning: skipped plugin '{bad['hang']}' (--safe-plugins): plugin '{bad['hang']}' did not finish loading " \
           f"within 3000 ms" in r.stderr
    assert f"plugin '{bad['abort']}' crashed while loading: SIGABRT" in r.stderr
    assert f"plugin '{bad['segv']}' crashed while loading: SIGSEGV" in r.stderr


# ---- bad input --------------------------------------------------------------------------------------


def test_a_pass_that_raises_stops_the_compile_naming_the_pass_and_the_last_frame(tmp_path, program):
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("broken")


        def helper(node):
            return 1 / 0


        @ext.pattern_pass("user.broken", roots=["Call"], applies_to=["Uses.Dialect(name=tile)"])
        def broken(node, rw):
            return helper(node)
    ''')
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    [d] = [d for d in e.value.diagnostics if d.code == "python.exception"]
    assert d.message.startswith("Python pattern 'broken' of pass 'user.broken' raised ZeroDivisionError: division by zero")
    line = ext.read_text().splitlines().index("    return 1 / 0") + 1
    assert f"(last frame: {ext}:{line} in helper)" in d.message
    assert d.span["file"] == str(ext) and d.span["line"] == line
    assert not (tmp_path / "pkg").exists(), "the package directory must not be left half-written"


def test_a_pattern_that_never_reaches_a_fixpoint_gets_the_iteration_bound_diagnostic(tmp_path, program):
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("spin")


        @ext.pattern_pass("user.spin", roots=["Constant"], applies_to=["Uses.Dialect(name=tile)"])
        def bump(node, rw):
            if isinstance(node.value, float):
                rw.set(node, "value", node.value + 1.0)
                return True
            return False
    ''')
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    text = str(e.value)
    assert "user.spin" in text and "bump" in text
    [d] = [d for d in e.value.errors if d.code == "rewrite.no-fixpoint"]
    assert "iteration" in d.message
    # (it had no span: placed at the last constant the pattern rewrote, a line of the program)
    assert d.span["file"].endswith("user_program.py") and d.span["line"] > 0, d.span


# A pattern answers True (it rewrote) or False (it does not apply); `return "yes"` or `return node` compiled
# silently, the driver reading it as True.
def test_a_pattern_returning_neither_true_nor_false_is_an_error_at_its_definition(tmp_path, program):
    for value in ('"yes"', "node", "42"):
        ext = write_extension(tmp_path, f'''
            from htp.extension import Extension

            ext = Extension("answers")


            @ext.pattern_pass("user.answers", roots=["Call"], applies_to=["Uses.Dialect(name=tile)"])
            def answer(node, rw):
                return {value}
        ''', name=f"answers_{len(value)}.py")
        with pytest.raises(htp.CompileError) as e:
            htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
        [d] = e.value.errors
        assert d.code == "python.pattern-result" and d.span["line"] == 7, str(e.value)
        assert "Python pattern 'answer' of pass 'user.answers' returned" in d.message
    # None (no return) is "does not apply", as False is
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("silent")


        @ext.pattern_pass("user.silent", roots=["Call"], applies_to=["Uses.Dialect(name=tile)"])
        def look(node, rw):
            pass
    ''', name="silent.py")
    run_and_check(htp.Context(plugins=[ext]), htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim",
                                                                                  tmp_path / "silent"))


# A file that defines no Extension was reported inside HTP's own extension.py; the same file given twice
# failed as "already taken by" itself; a module beside the extension could not be imported.
def test_loading_extension_files_as_a_user_gives_them(tmp_path, program):
    plain = write_extension(tmp_path, "X = 1\n", name="not_an_extension.py")
    with pytest.raises(htp.PluginError) as e:
        htp.Context(plugins=[plain])
    [d] = e.value.diagnostics
    assert d.code == "python.no-extension" and d.span["file"] == str(plain) and d.span["line"] == 1, str(e.value)
    helper = tmp_path / "user_helpers.py"
    helper.write_text("def reciprocal(c):\n    return 1.0 / c\n")
    ext = write_extension(tmp_path, EXTENSION.replace("from htp.extension import Extension",
                                                      "from htp.extension import Extension\nimport user_helpers")
                          .replace("r=1.0 / c.value", "r=user_helpers.reciprocal(c.value)"), name="uses_helper.py")
    ctx = htp.Context(plugins=[ext, ext])
    assert [p["name"] for p in ctx.plugins()].count("recip") == 1
    ctx.load_extension(ext)
    pkg = ctx.compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    assert "TMULS(" in kernel_code(pkg) and "TDIVS(" not in kernel_code(pkg)
    run_and_check(ctx, pkg)


def test_writing_a_wrong_kind_into_a_field_is_a_diagnostic_at_the_node(tmp_path, program):
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("malformed")


        @ext.pattern_pass("user.malformed", roots=["Call"], applies_to=["Uses.Dialect(name=tile)"])
        def malform(node, rw):
            if node.func.type == "Name" and node.func.id == "divs":
                rw.set(node, "func", "not a node")
                return True
            return False
    ''')
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    d = e.value.errors[0]
    assert d.code == "python.field-kind"
    assert d.message == "field 'func' of Call holds node, not a str"
    assert d.span["file"].endswith("user_program.py")
    assert d.span["line"] == PROGRAM.splitlines().index("    t = divs(load(x), D)") + 1


def test_inserting_a_statement_where_an_expression_belongs_is_refused_at_the_node(tmp_path, program):
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("misplaced")


        @ext.pattern_pass("user.misplaced", roots=["Call"], applies_to=["Uses.Dialect(name=tile)"])
        def misplace(node, rw):
            if node.func.type == "Name" and node.func.id == "divs":
                rw.insert(node, "args", 0, rw.create("Pass", node))
                return True
            return False
    ''')
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    first = e.value.errors[0]
    assert first.code != "python.exception" and "Pass" in first.message
    assert any(d.code == "python.exception" and "user.misplaced" in d.message for d in e.value.errors)


def test_a_malformed_capability_is_reported_at_the_python_line_that_declared_it(tmp_path):
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("typo")


        @ext.pattern_pass("user.typo", roots=["Call"], applies_to=["Uses.Dialect(name=tile"])
        def nothing(node, rw):
            return False
    ''')
    with pytest.raises(htp.PluginError) as e:
        htp.Context(plugins=[ext])
    [d] = e.value.diagnostics
    assert d.code == "capability.syntax"
    assert d.span["file"] == str(ext) and d.span["line"] == 7
    assert "applies_to[0] of pass 'user.typo'" in d.message


def test_an_extension_that_raises_while_importing_is_a_plugin_error_at_its_line(tmp_path):
    ext = write_extension(tmp_path, "from htp.extension import Extension\nimport no_such_module_xyz\n")
    with pytest.raises(htp.PluginError) as e:
        htp.Context(plugins=[ext])
    [d] = e.value.diagnostics
    assert d.code == "python.import" and d.span["line"] == 2
    assert "ModuleNotFoundError: No module named 'no_such_module_xyz'" in d.message


def test_views_kept_past_their_call_raise_instead_of_touching_freed_nodes(tmp_path, program):
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("keeper")
        kept = []


        @ext.pattern_pass("user.keep", roots=["Call"], applies_to=["Uses.Dialect(name=tile)"])
        def keep(node, rw):
            kept.append(node)
            return False
    ''')
    module = load_module(ext, "keeper_ext")
    htp.Context(plugins=[module]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    kept = module.kept
    assert kept and "expired" in repr(kept[0])
    with pytest.raises(ValueError, match="views are valid only during the call"):
        kept[0].type


def test_a_python_extension_may_not_reuse_a_loaded_plugins_name(tmp_path):
    ext = write_extension(tmp_path, 'from htp.extension import Extension\next = Extension("dialect-tile")\n')
    with pytest.raises(htp.PluginError, match="plugin name 'dialect-tile'.*is already taken"):
        htp.Context(plugins=[ext])


# A plugin's version is a semantic version (abi.h; lockfiles pin it, `version=^1.2` compares it): "one" loaded.
def test_a_plugin_version_that_is_not_a_semantic_version_is_refused(tmp_path):
    ext = write_extension(tmp_path, 'from htp.extension import Extension\next = Extension("worded", version="one")\n')
    with pytest.raises(htp.PluginError) as e:
        htp.Context(plugins=[ext])
    [d] = e.value.diagnostics
    assert d.code == "abi.version" and "has version 'one', which is not a semantic version such as 1.0.0" in d.message


# ---- intrinsic sets -----------------------------------------------------------------------------------

INTRINSICS = '''
from htp.dialects.tile import Tile
from htp.extension import Extension

ext = Extension("axpy-ops", version="0.1.0")
ops = ext.intrinsic_set("{name}", contract="elementwise")


@ops.op(targets=["pto-a2a3sim"])
def axpy(rw, a: float, x: Tile, y: Tile) -> Tile:
    """a * x + y"""
    return rw.expr("add(muls(x, a), y)", a=a, x=x, y=y)
'''

USES = '''
from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store
from htp.dialects.wsp import workload, P
from htp.intrinsics import {name} as F


@kernel
def k(x: In[Tensor[16, 32, f32]], y: In[Tensor[16, 32, f32]], z: Out[Tensor[16, 32, f32]]):
    store(z, {call})


@workload
def w(X: In[Tensor[32, 32, f32]], Y: In[Tensor[32, 32, f32]], Z: Out[Tensor[32, 32, f32]]):
    for i in P(2):
        k[i](X.tile(i, 0), Y.tile(i, 0), Z.tile(i, 0))
'''


def intrinsic_program(tmp_path, name, call="F.axpy(2.0, load(x), load(y))"):
    ext = load_module(write_extension(tmp_path, INTRINSICS.format(name=name), f"{name}_ext.py"), f"{name}_ext")
    path = tmp_path / f"{name}_prog.py"
    path.write_text(USES.format(name=name, call=call))
    return ext, load_module(path, f"{name}_prog"), path


def test_a_python_intrinsic_set_lowers_in_a_kernel_and_runs(tmp_path):
    ext, prog, _ = intrinsic_program(tmp_path, "axpyset")
    ctx = htp.Context(plugins=[ext])
    pkg = ctx.compile(prog.w, "pto-a2a3sim", tmp_path / "pkg", dump_ir="all")
    assert "axpyset.lower.pto-a2a3sim" in pkg.passes
    assert "store(z, add(muls(load(x), 2.0), load(y)))" in pkg.dump("axpyset.lower.pto-a2a3sim")
    [obligation] = [o for o in pkg.manifest["plan"]["obligations"] if "axpyset" in o["capability"]]
    assert obligation["accepted_by"] == ["axpyset.lower.pto-a2a3sim"]
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((32, 32)).astype(np.float32), rng.standard_normal((32, 32)).astype(np.float32)
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=x, Y=y)["Z"], 2 * x + y, rtol=1e-6)


SQUARE = '''
from htp.dialects.tile import Tile
from htp.extension import Extension

ext = Extension("square-ops", version="0.1.0")
ops = ext.intrinsic_set("{name}", contract="elementwise")


@ops.op
def square(rw, x: Tile) -> Tile:
    """x * x"""
    return rw.expr("mul(x, x)", x=x)


@ops.op
def first(rw, x: Tile, y: Tile) -> Tile:
    """x (y unused)"""
    return x
'''

RECEIVING = '''
from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, store
from htp.dialects.csp import Channel, process, program, recv, send
from htp.intrinsics import {name} as F


@program
def squares(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    a = Channel[Tile[16, 32, f32]](depth=2)
    b = Channel[Tile[16, 32, f32]](depth=2)

    @process(produces=[a, b])
    def gen():
        for i in range(4):
            t = load(X.tile(i, 0, shape=(16, 32)))
            send(a, t)
            send(b, t)

    @process(consumes=[a, b])
    def sink():
        for i in range(4):
            store(Y.tile(i, 0, shape=(16, 32)), F.square(F.first(recv(a), recv(b))))
'''


# A builder that uses a parameter twice (`rw.expr("mul(x, x)", x=x)`) cloned a `recv(ch)` argument, so the
# process received twice per call (csp.count-mismatch); one that ignores a parameter dropped its receive. An
# argument that receives is now a temporary assigned before the statement, received once.
@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_an_intrinsic_argument_that_receives_is_received_once(tmp_path, target):
    name = "sq" + target.split("-")[0]
    ext = load_module(write_extension(tmp_path, SQUARE.format(name=name), f"{name}_ext.py"), f"{name}_ext")
    path = tmp_path / f"{name}_prog.py"
    path.write_text(RECEIVING.format(name=name))
    prog = load_module(path, f"{name}_prog")
    ctx = htp.Context(plugins=[ext])
    pkg = ctx.compile(prog.squares, target, tmp_path / "pkg", dump_ir="all")
    lowered = pkg.dump(f"{name}.lower")
    assert lowered.count("recv(") == 2, lowered
    X = np.random.default_rng(5).standard_normal((64, 32)).astype(np.float32)
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(X=X)["Y"], X * X, rtol=1e-6)


def test_a_target_without_a_lowering_is_refused_at_the_call(tmp_path):
    ext, prog, path = intrinsic_program(tmp_path, "ptoonly")
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(prog.w, "aie-npu1", tmp_path / "pkg")
    [d] = [d for d in e.value.errors if "ptoonly" in d.message]
    assert "not accepted by target aie-npu1" in d.message and "axpyset" not in d.message
    assert d.span["file"] == str(path) and d.span["line"] == USES.splitlines().index("    store(z, {call})") + 1


def test_a_call_that_does_not_fit_the_signature_is_an_arity_error_at_the_call(tmp_path):
    ext, prog, path = intrinsic_program(tmp_path, "aritycheck", call="F.axpy(2.0, load(x))")
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(prog.w, "pto-a2a3sim", tmp_path / "pkg")
    [d] = e.value.errors
    assert d.code == "intrinsic.arity" and "aritycheck.axpy(a: float" in d.message and "missing a required" in d.message
    assert d.span["file"] == str(path)
    assert "<htp surface" not in d.message and "x: Tile" in d.message  # the signature as the user declared it


def test_a_call_with_a_keyword_the_op_does_not_take_names_it(tmp_path):
    ext, prog, path = intrinsic_program(tmp_path, "keywordcheck", call="F.axpy(2.0, load(x), z=load(y))")
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(prog.w, "pto-a2a3sim", tmp_path / "pkg")
    [d] = e.value.errors
    assert d.code == "intrinsic.arity" and "got an unexpected keyword argument 'z'" in d.message, d.message


# An argument whose kind its syntax settles against the op's declared types (the scalar and the tile of
# `axpy(a: float, x: Tile, y: Tile)` swapped) was refused by tile.typecheck in the builder's terms: "muls: 'a'
# must be a tile, got 0.5", an op the user never called. It is intrinsic.argument at the argument, naming the op.
@pytest.mark.parametrize("call, argument, wrong", [
    ("F.axpy(load(x), -0.5, load(y))", "load(x)", "argument 'a' is a scalar (float), got a tile (a load(...))"),
    ("F.axpy(a=2.0, x=3, y=load(y))", "3", "argument 'x' is a Tile, got the number 3"),
])
def test_an_argument_of_the_wrong_kind_names_the_ops_parameter(tmp_path, call, argument, wrong):
    ext, prog, path = intrinsic_program(tmp_path, "kindcheck", call=call)
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(prog.w, "pto-a2a3sim", tmp_path / "pkg")
    [d] = e.value.errors
    assert d.code == "intrinsic.argument" and d.message == "kindcheck.axpy(a: float, x: Tile, y: Tile) -> Tile: " + wrong
    line = USES.splitlines().index("    store(z, {call})")
    assert (d.span["file"], d.span["line"], d.span["col"]) == (str(path), line + 1,
                                                                len("    store(z, ") + call.index(argument))


def test_stubgen_writes_the_sets_signatures(tmp_path):
    ext = write_extension(tmp_path, INTRINSICS.format(name="stubbed"), "stubbed_ext.py")
    subprocess.run([sys.executable, "-m", "htp.stubgen", "--plugins", str(ext), "--out", str(tmp_path / "out")],
                   check=True, capture_output=True)
    stub = (tmp_path / "out" / "intrinsics" / "stubbed.pyi").read_text()
    assert "from htp.dialects.tile import Tile" in stub
    assert 'def axpy(a: float, x: Tile, y: Tile) -> Tile:\n    """a * x + y"""' in stub


@pytest.mark.skipif(not HOST, reason="HTP_HOST_EXE is not set (run through ctest)")
def test_htp_host_makes_an_extensions_intrinsic_set_importable_by_the_program(tmp_path):
    # python-extensions.md: `htp-host --plugins ext.py compile prog.py` where prog.py imports the set from
    # htp.intrinsics (not the extension's module): the capture did not load the extension, so the import failed
    # (capture.run: cannot import name 'cliact').
    ext = tmp_path / "soft_ops.py"
    ext.write_text(textwrap.dedent('''
        from htp.extension import Extension
        from htp.dialects.tile import Tile

        ext = Extension("cli-soft", version="0.1.0")
        act = ext.intrinsic_set("cliact", contract="unary")

        @act.op
        def negate(rw, x: Tile) -> Tile:
            return rw.expr("neg(x)", x=x)
    '''))
    prog = tmp_path / "uses_the_set.py"
    prog.write_text(textwrap.dedent('''
        from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store
        from htp.intrinsics import cliact as A

        @kernel
        def k(x: In[Tensor[16, 32, f32]], z: Out[Tensor[16, 32, f32]]):
            store(z, A.negate(load(x)))
    '''))
    out = tmp_path / "pkg"
    r = subprocess.run([HOST, "--plugins", str(ext), "compile", str(prog), "--target", "pto-a2a3sim", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    x = np.random.default_rng(17).standard_normal((16, 32)).astype(np.float32)
    res = htp.bind(htp.Package(out), htp.Context(plugins=[ext])).run(x=x)
    np.testing.assert_array_equal(res["z"], -x)


# ---- written the way users get them wrong (or almost right) ------------------------------------------


def test_declaring_a_set_another_plugin_declares_is_refused_and_leaves_its_surface_alone(tmp_path):
    # The set's surface was replaced before the registry refused the extension: `from htp.dialects.tile import
    # load` then failed for the rest of the process.
    ext = write_extension(tmp_path, '''
        from htp.dialects.tile import Tile
        from htp.extension import Extension

        ext = Extension("clash")
        S = ext.intrinsic_set("tile", contract="unary")
    ''', "clash_ext.py")
    with pytest.raises(htp.PluginError) as e:
        htp.Context(plugins=[ext])
    [d] = e.value.diagnostics
    assert "intrinsic set 'tile' is already declared by plugin 'dialect-tile'" in d.message
    assert d.span["file"] == str(ext) and d.span["line"] == 6  # the user's declaration, not HTP's code
    from htp.dialects.tile import load, store  # noqa: F401  (still the built-in surface)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_builder_returning_one_of_its_arguments_lowers_to_a_copy_of_it(tmp_path, target):
    # `return x` (an identity or "first" op) was ast.not-detached, reported inside htp/extension.py.
    ext = load_module(write_extension(tmp_path, '''
        from htp.dialects.tile import Tile
        from htp.extension import Extension

        ext = Extension("ident-ops")
        S = ext.intrinsic_set("identops", contract="elementwise")

        @S.op
        def first(rw, x: Tile, y: Tile) -> Tile:
            return x
    ''', "ident_ext.py"), "ident_ext")
    from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, store
    from htp.intrinsics import identops

    @kernel
    def pick(x: In[Tensor[16, 32, f32]], y: In[Tensor[16, 32, f32]], z: Out[Tensor[16, 32, f32]]):
        store(z, identops.first(load(x), load(y)))

    ctx = htp.Context(plugins=[ext])
    x = np.random.default_rng(18).standard_normal((16, 32)).astype(np.float32)
    r = htp.bind(ctx.compile(pick, target, tmp_path / target), ctx).run(x=x, y=2 * x)
    np.testing.assert_array_equal(np.asarray(r["z"]), x)


def test_an_extensions_mistakes_are_reported_at_the_users_line(tmp_path):
    # A syntax error was at <frozen importlib._bootstrap>; an unknown stage inside htp/extension.py.
    syntax = write_extension(tmp_path, "from htp.extension import Extension\next = Extension('s')\nx = (1,\n",
                             "syntax_ext.py")
    stage = write_extension(tmp_path, '''
        from htp.extension import Extension
        ext = Extension("stage-typo")

        @ext.pattern_pass("a.p", roots=["Call"], stage="optimize", applies_to=["Uses.Dialect(name=tile)"])
        def p(node, rw):
            return False
    ''', "stage_ext.py")
    for ext, line in [(syntax, 3), (stage, 5)]:
        with pytest.raises(htp.PluginError) as e:
            htp.Context(plugins=[ext])
        [d] = e.value.diagnostics
        assert d.code == "python.import" and d.span["file"] == str(ext) and d.span["line"] == line, d.span
    missing = tmp_path / "no_such_ext.py"
    with pytest.raises(htp.PluginError) as e:
        htp.Context(plugins=[missing])
    [d] = e.value.diagnostics
    assert d.code == "plugins.missing" and f"Python extension '{missing}' not found" in d.message


def test_an_op_declared_from_a_lambda_is_refused_at_its_declaration(tmp_path):
    # Its name was '<lambda>': a confusing capability.syntax at load, and stubgen wrote `def <lambda>(x):`.
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension
        ext = Extension("lam")
        S = ext.intrinsic_set("lam", contract="unary")
        S.op(lambda rw, x: rw.clone(x))
    ''', "lam_ext.py")
    with pytest.raises(htp.PluginError) as e:
        htp.Context(plugins=[ext])
    [d] = e.value.diagnostics
    assert "the op name '<lambda>' of intrinsic set 'lam' is not a Python identifier" in d.message
    assert d.span["file"] == str(ext) and d.span["line"] == 5


def test_stubgen_reports_an_extension_that_fails_to_import_as_a_diagnostic(tmp_path):
    ext = write_extension(tmp_path, "from htp.extension import Extension\nraise RuntimeError('no GPU here')\n",
                          "boom_ext.py")
    for spec, said in [(ext, f"{ext}:2:1: error: Python extension '{ext}' raised RuntimeError: no GPU here"),
                       (tmp_path / "missing_ext.py", "not found: No such file or directory [plugins.missing]")]:
        r = subprocess.run([sys.executable, "-m", "htp.stubgen", "--plugins", str(spec), "--out", str(tmp_path / "o")],
                           capture_output=True, text=True)
        assert r.returncode == 1 and said in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_builder_may_return_the_ops_of_another_python_set(tmp_path, target):
    # python-extensions.md §3: a builder returns existing tile ops "or another set's ops". Another Python set's op
    # was never lowered (its pass ran first, or was not selected): tile.intrinsic-contract at the user's call.
    ext = load_module(write_extension(tmp_path, '''
        from htp.dialects.tile import Tile
        from htp.extension import Extension

        ext = Extension("two-sets")
        inner = ext.intrinsic_set("inner", contract="unary")
        outer = ext.intrinsic_set("outer", contract="unary")

        @inner.op
        def twice(rw, x: Tile) -> Tile:
            return rw.expr("muls(x, 2.0)", x=x)

        @outer.op
        def quad(rw, x: Tile) -> Tile:
            return rw.expr("htp.intrinsics.inner.twice(htp.intrinsics.inner.twice(x))", x=x)
    ''', "two_sets_ext.py"), "two_sets_ext")
    from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, store
    from htp.intrinsics import outer

    @kernel
    def k(x: In[Tensor[16, 32, f32]], z: Out[Tensor[16, 32, f32]]):
        store(z, outer.quad(load(x)))

    ctx = htp.Context(plugins=[ext])
    x = np.random.default_rng(19).standard_normal((16, 32)).astype(np.float32)
    r = htp.bind(ctx.compile(k, target, tmp_path / target), ctx).run(x=x)
    np.testing.assert_array_equal(np.asarray(r["z"]), 4 * x)


# A pass editing the kernel IR (tile.kernels) after tile.typecheck: a store at a constant offset past its tensor
# corrupted the heap of the process running the package (both simulators), a load there read garbage, and
# backend-aie converted silently from a register of another dtype. The backends check them again.
@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
@pytest.mark.parametrize("edit", ["store-past", "load-past", "dtype"])
def test_kernel_ir_a_pass_edits_is_checked_again_by_the_backend(tmp_path, target, edit):
    ext = write_extension(tmp_path, f'''
        from htp.extension import Extension

        ext = Extension("kir-edit", version="1.0.0")
        edit = ext.pass_("user.kir-edit", stage="lower", requires=["IR.TileKernels"], provides=["IR.KirEdited"],
                         applies_to=["Uses.Dialect(name=tile)"], before=["pto.legalize", "aie.map"])

        @edit.module
        def run(rw):
            doc = rw.module_attr("tile.kernels", None)
            for k in doc["kernels"]:
                for op in k["body"]:
                    if {edit!r} == "store-past" and op["op"] == "store":
                        op["offset"][0] = 24
                    if {edit!r} == "load-past" and op["op"] == "load":
                        op["offset"][0] = 1000
                    if {edit!r} == "dtype" and op["op"] == "load":
                        for local in k["locals"]:
                            if local["name"] == op["dst"]:
                                local["dtype"] = "f16"
            rw.set_module_attr("tile.kernels", doc)
    ''', name="kir_edit.py")
    from htp.dialects.tile import In, Out, Tensor, f32, kernel, load, muls, store

    @kernel
    def scale32(x: In[Tensor[32, 16, f32]], o: Out[Tensor[32, 16, f32]]):
        store(o, muls(load(x), 2.0))

    ctx = htp.Context(plugins=[ext])
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(scale32, target, tmp_path / "pkg")
    text = str(e.value)
    if edit == "dtype":
        assert "f16" in text and "f32" in text, text
    else:
        assert ("covers [24, 56)" if edit == "store-past" else "covers [1000, 1032)") in text, text
        assert "outside its extent 32" in text, text


# A pass that copies a channel operation (here a pattern rewriting relu(x) to add(x, x), x being recv(ch))
# made the program receive twice where it receives once: aie-npu1 computed a1 * a2 from two items silently
# (the counts happened to balance), pto-a2a3sim blamed a second receive the user never wrote. Each channel
# operation now carries an id, and a copy is csp.copied-op at the copy.
def test_a_pass_copying_a_receive_is_reported_at_the_copy(tmp_path):
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("relu-to-add", version="1.0.0")

        @ext.pattern_pass("user.relu-to-add", roots=["Call"], stage="canonicalize",
                          applies_to=["Uses.Dialect(name=csp)"], after=["csp.canonicalize"],
                          before=["tile.typecheck"])
        def relu_to_add(node, rw):
            if node.func.type != "Name" or node.func.id != "relu" or len(node.args) != 1:
                return False
            rw.replace(node, rw.expr("add(x, x)", x=node.args[0]))
            return True
    ''', name="square_ext.py")
    from htp.dialects.csp import Channel, process, program, recv, send
    from htp.dialects.tile import In, Out, Tensor, Tile, f32, load, relu, store

    @program
    def squares(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
        a = Channel[Tile[16, 32, f32]](depth=2)
        b = Channel[Tile[16, 32, f32]](depth=2)

        @process(produces=[a])
        def source():
            for i in range(4):
                send(a, load(X.tile(i, 0, shape=(16, 32))))

        @process(consumes=[a], produces=[b])
        def square_each():
            for i in range(4):
                send(b, relu(recv(a)))

        @process(consumes=[b])
        def sink():
            for i in range(4):
                store(Y.tile(i, 0, shape=(16, 32)), recv(b))

    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(squares, "aie-npu1", tmp_path / "pkg")
    assert "is a copy of the one at line" in str(e.value) and "[csp.copied-op]" in str(e.value), str(e.value)


# Entry points a pass declares (htp.entrypoints) that verify and run would refuse (an unknown dtype, a duplicate
# name) were copied into the manifest: the compile succeeded and wrote a package that could never run.
@pytest.mark.parametrize("damage", ["dtype", "duplicate"])
def test_entry_points_that_verify_would_refuse_fail_the_compile(tmp_path, program, damage):
    ext = write_extension(tmp_path, f'''
        from htp.extension import Extension

        ext = Extension("entry-damage", version="1.0.0")
        damage = ext.pass_("user.entry-damage", stage="package", applies_to=["Uses.Dialect(name=tile)"])

        @damage.module
        def run(rw):
            entries = rw.module_attr("htp.entrypoints", [])
            if {damage!r} == "dtype":
                entries[0]["params"][0]["dtype"] = "f99"
            else:
                entries.append(dict(entries[0]))
            rw.set_module_attr("htp.entrypoints", entries)
    ''', name="entry_damage.py")
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(program.scale, "pto-a2a3sim", tmp_path / "pkg")
    assert "[package.entrypoint]" in str(e.value), str(e.value)
    assert ("unknown dtype \"f99\"" if damage == "dtype" else "is declared twice") in str(e.value), str(e.value)
    assert not (tmp_path / "pkg").exists()


@pytest.mark.skipif(not HOST, reason="HTP_HOST_EXE is not set (run through ctest)")
def test_htp_host_stops_a_pass_past_its_time_limit_naming_it(tmp_path):
    # A pass that never returns hung htp-host with nothing said; past --pass-time-limit (default 600 s) the
    # process stops (exit status 124), naming the pass and its plugin.
    ext = write_extension(tmp_path, textwrap.dedent('''
        import time
        from htp.extension import Extension

        ext = Extension("stuck", version="1.0.0")
        p = ext.pass_("stuck.wait", stage="canonicalize", applies_to=["Uses.Dialect(name=tile)"])


        @p.module
        def wait(rw):
            time.sleep(3600)
    '''))
    prog = tmp_path / "user_program.py"
    prog.write_text(PROGRAM)
    start = time.monotonic()
    r = subprocess.run([HOST, "--plugins", str(ext), "compile", str(prog), "--target", "pto-a2a3sim", "-o",
                        str(tmp_path / "out"), "--pass-time-limit", "1.5"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 124, r.stderr
    assert (f"htp: pass 'stuck.wait' of plugin 'stuck' ({ext}) has run for 1.5 s, its time limit "
            "(--pass-time-limit 1.5); stopping") in r.stderr, r.stderr
    assert time.monotonic() - start < 120


# A pass that erases every function: aie-npu1 refused the compile (aie.no-entry) while pto-a2a3sim wrote a
# package with no entry points, which only `run` refused.
@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_program_left_without_entry_points_does_not_compile(tmp_path, program, target):
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("eraser")
        wipe = ext.pass_("user.erase-all", applies_to=["Uses.Dialect(name=tile)"], after=["tile.fold"],
                         before=["tile.typecheck"])


        @wipe.module
        def erase(rw):
            root = rw.root()
            while len(root.body):
                rw.erase(root, "body", 0)
    ''')
    with pytest.raises(htp.CompileError) as e:
        htp.Context(plugins=[ext]).compile(program.scale, target, tmp_path / "pkg")
    assert [d.code for d in e.value.errors] == [{"pto-a2a3sim": "pto.no-entry", "aie-npu1": "aie.no-entry"}[target]]
    assert not (tmp_path / "pkg").exists()


# An island step's stderr (a tool's warnings) is part of its record (python-extensions.md §5): it was missing
# from the package when the step came from the cache.
def test_an_island_steps_stderr_is_recorded_from_the_cache_too(tmp_path, program, monkeypatch):
    monkeypatch.setenv("HTP_CACHE_DIR", str(tmp_path / "cache"))
    ext = write_extension(tmp_path, '''
        from htp.extension import Extension

        ext = Extension("warns")
        step = ext.pass_("user.warns", stage="emit", applies_to=["Uses.Dialect(name=tile)"])


        @step.module
        def run(rw):
            out = rw.run_island("echo", ["sh", "-c", "cat; echo 'tool warning: deprecated flag' >&2"], b"hi\\n")
            rw.write_file("extra/out.txt", out, "config")
    ''')
    ctx = htp.Context(plugins=[ext])
    for out, cached in (("one", False), ("two", True)):
        pkg = ctx.compile(program.scale, "pto-a2a3sim", tmp_path / out)
        record = pkg.path / "ir/islands/user.warns/echo"
        assert json.loads((record / "command.json").read_text())["cached"] is cached
        assert (record / "stderr.txt").read_text() == "tool warning: deprecated flag\n", out
        assert (pkg.path / "extra/out.txt").read_text() == "hi\n"


# A Python extension named by a plugin set or HTP_PLUGIN_PATH, or given to `plugins verify`: each was taken for a
# library ("has no manifest (expected 'ext.plugin.json')"), though --plugins and htp.Context load it.
def test_a_python_extension_loads_from_a_plugin_set_and_htp_plugin_path(tmp_path, program, monkeypatch):
    ext = write_extension(tmp_path)
    plugin_set = tmp_path / "set.json"
    plugin_set.write_text(json.dumps({"schema": "htp.plugin-set.v1", "plugins": [ext.name]}))
    for plugins, env in (([str(plugin_set)], None), (None, str(ext))):
        if env:
            monkeypatch.setenv("HTP_PLUGIN_PATH", env)
        ctx = htp.Context(plugins=plugins)
        assert "recip" in [p["name"] for p in ctx.plugins()]
        pkg = ctx.compile(program.scale, "pto-a2a3sim", tmp_path / ("env" if env else "set"))
        assert "user.divs-to-muls" in pkg.passes
    if not HOST:
        pytest.skip("HTP_HOST_EXE is not set (run through ctest): the htp-host half is not checked")
    monkeypatch.delenv("HTP_PLUGIN_PATH")
    for args, env in ((["--plugins", str(plugin_set), "plugins", "list"], {}),
                      (["plugins", "list"], {"HTP_PLUGIN_PATH": str(ext)}),
                      (["plugins", "verify", str(ext)], {})):
        r = subprocess.run([HOST, *args], capture_output=True, text=True, env={**os.environ, **env})
        assert r.returncode == 0 and "recip" in r.stdout, (args, r.stdout, r.stderr)


# An op lowered only for a target no plugin supports (a typo: "aie-npu9000") loaded without a word; the pass can
# never run. A warning says so at the op's declaration.
def test_an_op_for_a_target_no_plugin_supports_is_a_warning_at_the_op(tmp_path):
    ext = write_extension(tmp_path, '''
        from htp.dialects.tile import Tile
        from htp.extension import Extension

        ext = Extension("typo-ops", version="0.1.0")
        ops = ext.intrinsic_set("typo_ops")


        @ops.op(targets=["aie-npu9000"])
        def ident(rw, x: Tile) -> Tile:
            return x
    ''')
    with pytest.warns(htp.CompileWarning, match=r"\[python.unknown-target\] pass 'typo_ops.lower.aie-npu9000' of "
                                                r"Python extension 'typo-ops' applies to target 'aie-npu9000', which "
                                                r"no loaded plugin supports") as caught:
        htp.Context(plugins=[ext])
    assert [(w.filename, w.lineno) for w in caught if "unknown-target" in str(w.message)] == [(str(ext), 9)]
