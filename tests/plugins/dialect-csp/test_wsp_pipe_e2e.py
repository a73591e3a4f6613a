"""A WSP `with P.pipe():` over channels, end to end on pto-a2a3sim: programs/wsp_pipe.py (the load -> compute
-> store pipeline of programs/pipeline.py, written as a workload launching kernels) is compiled by
htp.Context with the built-in plugins, run with htp.bind(pkg).run(...) and compared with NumPy.
Needs HTP_PLUGIN_DIR (set by ctest); skips, saying why, when backend-pto is not built."""
import importlib.util
import os
import pathlib

import numpy as np
import pytest

import htp

PROGRAMS = pathlib.Path(__file__).parent / "programs"


@pytest.fixture(scope="module")
def ctx():
    plugins = pathlib.Path(os.environ["HTP_PLUGIN_DIR"])
    if not (plugins / "htp-backend-pto.so").exists():
        pytest.skip(f"backend-pto is not built in {plugins}")
    return htp.Context(plugins=[str(plugins)], use_environment=False)


def load(program):
    spec = importlib.util.spec_from_file_location(program, PROGRAMS / f"{program}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pipe_over_channels_runs_on_pto_sim(ctx, tmp_path):
    module = load("wsp_pipe")
    pkg = ctx.compile([module.pipeline], target="pto-a2a3sim", out=str(tmp_path / "pkg"))
    x = np.random.default_rng(11).standard_normal((256, 128)).astype(np.float32)
    r = htp.bind(pkg, ctx).run(cache_dir=tmp_path / "cache", run_dir=tmp_path / "run", X=x)
    assert r.binding == "pto.a2a3sim"
    np.testing.assert_allclose(r["Y"], np.exp(x) + 1, rtol=1e-6)
    assert r.report["tasks"] == 24  # 3 stages x 8 items, as the CSP program of pipeline.py


def test_pipe_is_a_csp_program_entry(ctx, tmp_path):
    module = load("wsp_pipe")
    pkg = ctx.compile([module.pipeline], target="pto-a2a3sim", out=str(tmp_path / "pkg"))
    kinds = {e["name"]: e["kind"] for e in pkg.manifest["entrypoints"]}
    assert kinds == {"pipeline": "csp-program"}


def test_stage_moving_two_items_per_iteration_is_rejected_by_backend_pto(ctx, tmp_path):
    module = load("pipe_two_items")
    with pytest.raises(htp.CompileError) as e:
        ctx.compile([module.pairs], target="pto-a2a3sim", out=str(tmp_path / "pkg"))
    assert ("pipe_two_items.py:19:24: error: pipe stage 'copy_rows' moves two items of channel 'rows' per "
            "iteration; backend-pto gives each iteration one slot of a channel [pto.csp]") in str(e.value)
    assert not (tmp_path / "pkg").exists()


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_consume_item_named_twice_is_received_once(ctx, tmp_path, target):
    # add2(t, t) received two items per iteration on aie-npu1 (it ran out of items at run time) and was
    # refused on pto-a2a3sim as moving two items; two launches of t took consecutive items on aie.
    module = load("pipe_item_twice")
    x = np.random.default_rng(12).standard_normal((64, 64)).astype(np.float32)
    pkg = ctx.compile([module.doubled], target=target, out=str(tmp_path / "doubled"))
    r = htp.bind(pkg, ctx).run(cache_dir=tmp_path / "cache", run_dir=tmp_path / "run1", X=x)
    np.testing.assert_array_equal(r["Y"], x + x)
    pkg = ctx.compile([module.fanned], target=target, out=str(tmp_path / "fanned"))
    r = htp.bind(pkg, ctx).run(cache_dir=tmp_path / "cache", run_dir=tmp_path / "run2", X=x)
    np.testing.assert_array_equal(r["Y"], x + x)
    np.testing.assert_array_equal(r["Z"], x * x)
