"""Schedule directives that change how a workload runs, on both simulator targets (docs/dialects/wsp.md §2):
`tile(axis, f)` groups f consecutive iterations (pto-a2a3sim: one task runs the kernel f times; aie-npu1:
one core runs f grid points), `pipeline(n)` keeps n iterations in flight (pto-a2a3sim: a sequential loop's
intermediate rotates over n slots; aie-npu1: FIFOs n objects deep). Each test compares a workload with the
directive to the same workload without it: equal numbers, and the effect visible in the package, the run
report and the trace."""
import json
import re
import textwrap

import numpy as np
import pytest

import htp

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_tile_groups_consecutive_iterations": [
        ("schedule `tile`", "pto-a2a3sim"), ("schedule `tile`", "aie-npu1")],
    "test_pipeline_keeps_iterations_in_flight": [
        ("schedule `pipeline`", "pto-a2a3sim"), ("schedule `pipeline`", "aie-npu1")],
    "test_directives_compose": [
        (c, t) for c in ("schedule `tile`", "schedule `buffer`") for t in ("pto-a2a3sim", "aie-npu1")],
    "test_buffer_keeps_an_intermediate_in_core_memory": [
        ("schedule `buffer`", "pto-a2a3sim"), ("schedule `buffer`", "aie-npu1")],
}

PROGRAM_NAME = "schedule_program"  # the program and ctx fixtures: conftest.py
PROGRAM = textwrap.dedent('''
    from htp.dialects.tile import (kernel, Tensor, Scalar, In, Out, InOut, f32, load, store, add, exp, muls, rowsum,
                                   rowexpand_div, matmul, adds, mul)
    from htp.dialects.wsp import workload, schedule, pipeline, tile, buffer, dispatch, affinity, P, DenseDyn

    N, R, C = 8, 16, 64


    @kernel
    def scale(x: In[Tensor[R, C, f32]], y: Out[Tensor[R, C, f32]], s: Scalar[f32]):
        store(y, muls(load(x), s))


    @workload
    def rows(X: In[Tensor[N * R, C, f32]], Y: Out[Tensor[N * R, C, f32]]):
        for i in P(N):
            scale[i](X.tile(i, 0), Y.tile(i, 0), i + 1)


    @workload
    def rows_tiled(X: In[Tensor[N * R, C, f32]], Y: Out[Tensor[N * R, C, f32]]):
        for i in P(N):
            scale[i](X.tile(i, 0), Y.tile(i, 0), i + 1)


    @schedule(rows_tiled)
    def four_per_task():
        tile("i", 4)


    @workload
    def rows_bad_tile(X: In[Tensor[N * R, C, f32]], Y: Out[Tensor[N * R, C, f32]]):
        for i in P(N):
            scale[i](X.tile(i, 0), Y.tile(i, 0), i + 1)


    @schedule(rows_bad_tile)
    def three_per_task():
        tile("i", 3)


    @workload
    def rows_dyn(X: In[Tensor[N * R, C, f32]], Y: Out[Tensor[N * R, C, f32]], n: int):
        for i in P(DenseDyn(n)):
            scale[i](X.tile(i, 0), Y.tile(i, 0), i + 1)


    @schedule(rows_dyn)
    def three_per_task_dyn():
        tile("i", 3)


    @kernel
    def produce(x: In[Tensor[R, C, f32]], buf: Out[Tensor[R, C, f32]]):
        store(buf, exp(muls(load(x), 0.5)))


    @kernel
    def consume(buf: In[Tensor[R, C, f32]], acc: InOut[Tensor[R, C, f32]]):
        store(acc, add(load(acc), load(buf)))


    @workload
    def scan(X: In[Tensor[N * R, C, f32]], Y: InOut[Tensor[R, C, f32]]):
        buf: Tensor[R, C, f32]
        for k in P.seq(N):
            produce[k](X.tile(k, 0), buf)
            consume[k](buf, Y)


    @workload
    def scan_piped(X: In[Tensor[N * R, C, f32]], Y: InOut[Tensor[R, C, f32]]):
        buf: Tensor[R, C, f32]
        for k in P.seq(N):
            produce[k](X.tile(k, 0), buf)
            consume[k](buf, Y)


    @schedule(scan_piped)
    def double_buffered():
        pipeline(2)


    @workload
    def stream(X: In[Tensor[N * R, C, f32]], Y: Out[Tensor[N * R, C, f32]]):
        for c in P(2):
            for k in P.seq(N // 2):
                scale[c, k](X.tile(c * (N // 2) + k, 0), Y.tile(c * (N // 2) + k, 0), 2.0)


    @workload
    def stream_piped(X: In[Tensor[N * R, C, f32]], Y: Out[Tensor[N * R, C, f32]]):
        for c in P(2):
            for k in P.seq(N // 2):
                scale[c, k](X.tile(c * (N // 2) + k, 0), Y.tile(c * (N // 2) + k, 0), 2.0)


    @schedule(stream_piped)
    def triple_buffered():
        pipeline(3)


    @kernel
    def shift(x: In[Tensor[R, C, f32]], t: Out[Tensor[R, C, f32]]):
        store(t, exp(muls(load(x), 0.5)))


    @kernel
    def normalise(t: In[Tensor[R, C, f32]], y: Out[Tensor[R, C, f32]]):
        v = load(t)
        store(y, rowexpand_div(v, rowsum(v)))


    @workload
    def softmax(X: In[Tensor[4 * R, C, f32]], Y: Out[Tensor[4 * R, C, f32]]):
        e: Tensor[R, C, f32]
        for i in P(4):
            shift[i](X.tile(i, 0), e)
            normalise[i](e, Y.tile(i, 0))


    @workload
    def softmax_local(X: In[Tensor[4 * R, C, f32]], Y: Out[Tensor[4 * R, C, f32]]):
        e: Tensor[R, C, f32]
        for i in P(4):
            shift[i](X.tile(i, 0), e)
            normalise[i](e, Y.tile(i, 0))


    @schedule(softmax_local)
    def keep_e_local():
        buffer("e", "local")


    @workload
    def softmax_param(X: In[Tensor[4 * R, C, f32]], Y: Out[Tensor[4 * R, C, f32]]):
        e: Tensor[R, C, f32]
        for i in P(4):
            shift[i](X.tile(i, 0), e)
            normalise[i](e, Y.tile(i, 0))


    @schedule(softmax_param)
    def keep_x_local():
        buffer("X", "local")


    @workload
    def softmax_l1(X: In[Tensor[4 * R, C, f32]], Y: Out[Tensor[4 * R, C, f32]]):
        e: Tensor[R, C, f32]
        for i in P(4):
            shift[i](X.tile(i, 0), e)
            normalise[i](e, Y.tile(i, 0))


    @schedule(softmax_l1)
    def keep_e_in_l1():
        buffer("e", "L1")


    @workload
    def chain(X: In[Tensor[8 * R, C, f32]], Z: Out[Tensor[8 * R, C, f32]]):
        e: Tensor[R, C, f32]
        y: Tensor[R, C, f32]
        for i in P(8):
            shift[i](X.tile(i, 0), e)
            normalise[i](e, y)
            scale[i](y, Z.tile(i, 0), i + 1)


    @schedule(chain)
    def fused_and_grouped():
        buffer("e", "local")
        buffer("y", "local")
        tile("i", 2)
        dispatch(affinity("i"))

    @kernel
    def stage(a: In[Tensor[R, C, f32]], h: Out[Tensor[R, C, f32]]):
        store(h, load(a))


    @kernel
    def project(h: In[Tensor[R, C, f32]], w: In[Tensor[C, R, f32]], c: Out[Tensor[R, R, f32]]):
        store(c, matmul(load(h), load(w)))


    @workload
    def staged_projection(A: In[Tensor[R, C, f32]], W: In[Tensor[C, R, f32]], Z: Out[Tensor[R, R, f32]]):
        h: Tensor[R, C, f32]
        stage(A, h)
        project(h, W, Z)


    @schedule(staged_projection)
    def keep_h_in_l1():
        buffer("h", "L1")


    @kernel
    def square(a: In[Tensor[R, R, f32]], h: Out[Tensor[R, R, f32]]):
        store(h, matmul(load(a), load(a)))


    @kernel
    def project2(h: In[Tensor[R, R, f32]], w: In[Tensor[R, R, f32]], c: Out[Tensor[R, R, f32]]):
        store(c, matmul(load(h), load(w)))


    @workload
    def two_products(A: In[Tensor[R, R, f32]], W: In[Tensor[R, R, f32]], Z: Out[Tensor[R, R, f32]]):
        h: Tensor[R, R, f32]
        square(A, h)
        project2(h, W, Z)


    @schedule(two_products)
    def keep_product_in_l1():
        buffer("h", "L1")

    @kernel
    def doubled_and_tripled(x: In[Tensor[R, C, f32]], t: Out[Tensor[R, C, f32]], y: Out[Tensor[R, C, f32]]):
        a = load(x)
        store(t, muls(a, 2.0))
        store(y, muls(a, 3.0))


    @kernel
    def summed(t: In[Tensor[R, C, f32]], y: In[Tensor[R, C, f32]], z: Out[Tensor[R, C, f32]]):
        store(z, add(load(t), load(y)))


    @workload
    def reads_back(X: In[Tensor[4 * R, C, f32]], Y: Out[Tensor[4 * R, C, f32]], Z: Out[Tensor[4 * R, C, f32]]):
        t: Tensor[R, C, f32]
        for i in P(4):
            doubled_and_tripled[i](X.tile(i, 0), t, Y.tile(i, 0))
            summed[i](t, Y.tile(i, 0), Z.tile(i, 0))


    @schedule(reads_back)
    def keep_t_local():
        buffer("t", "local")

    @kernel
    def plus_one(y: In[Tensor[R, C, f32]], t: Out[Tensor[R, C, f32]]):
        store(t, adds(load(y), 1.0))


    @kernel
    def times_old(t: In[Tensor[R, C, f32]], y: InOut[Tensor[R, C, f32]]):
        store(y, mul(load(t), load(y)))


    @workload
    def reads_then_writes(Y: InOut[Tensor[4 * R, C, f32]]):
        t: Tensor[R, C, f32]
        for i in P(4):
            plus_one[i](Y.tile(i, 0), t)
            times_old[i](t, Y.tile(i, 0))


    @schedule(reads_then_writes)
    def keep_t_local_too():
        buffer("t", "local")

    @kernel
    def squared_from(a: In[Tensor[R, C, f32]], b: In[Tensor[R, C, f32]], y: Out[Tensor[R, C, f32]]):
        store(y, mul(load(a), load(b)))


    @workload
    def passed_twice(X: In[Tensor[4 * R, C, f32]], Y: Out[Tensor[4 * R, C, f32]]):
        t: Tensor[R, C, f32]
        for i in P(4):
            plus_one[i](X.tile(i, 0), t)
            squared_from[i](t, t, Y.tile(i, 0))


    @schedule(passed_twice)
    def keep_t_local_twice():
        buffer("t", "local")

''')

TARGETS = ("pto-a2a3sim", "aie-npu1")


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(0).standard_normal((128, 64)).astype(np.float32)


def run(ctx, fn, target, out, **args):
    pkg = ctx.compile(fn, target=target, out=out, force=True)
    return pkg, htp.bind(pkg, ctx).run(**args)


def task_events(r):
    events = json.loads((r.run_dir / "trace.json").read_text())["traceEvents"]
    return [e for e in events if e.get("ph") == "X" and e.get("cat") in ("aic", "aiv")]


@pytest.mark.parametrize("target", TARGETS)
def test_tile_groups_consecutive_iterations(ctx, program, tmp_path, x, target):
    expected = x * np.repeat(np.arange(1, 9, dtype=np.float32), 16)[:, None]
    _, plain = run(ctx, program.rows, target, tmp_path / "plain", X=x)
    pkg, tiled = run(ctx, program.rows_tiled, target, tmp_path / "tiled", X=x)
    for r in (plain, tiled):
        np.testing.assert_array_equal(np.asarray(r["Y"]), expected)
    if target == "pto-a2a3sim":
        # 8 tasks become 2, each running the kernel 4 times: a kernel scale__x4 whose entry loops over its runs,
        # and an orchestration loop over blocks of 4 iterations that passes each run's views and scalars.
        assert plain.report["tasks"] == 8 and tiled.report["tasks"] == 2
        kernels = pkg.path / "codegen/pto/kernels"
        assert sorted(p.name for p in kernels.glob("ai?/*.cpp")) == ["scale__x4.cpp"]  # scale runs only grouped
        source = (kernels / "aiv/scale__x4.cpp").read_text()
        assert "for (int64_t run = 0; run < 4; ++run)" in source and "htp_kernel_run(run_args);" in source
        orchestration = (kernels / "orchestration/rows_tiled.cpp").read_text()
        assert "for (int64_t v_i__t = 0; v_i__t < 2; ++v_i__t)" in orchestration
        assert re.search(r'htp_mul\(htp_add\(v_i, 3, "[^"]*"\), 16, "[^"]*"\)', orchestration)  # the last run's view
        assert [e["name"] for e in task_events(tiled)] == ["scale__x4"] * 2
        registry = json.loads((pkg.path / "codegen/pto/kernel_registry.json").read_text())
        entry = next(k for k in registry["kernels"] if k["name"] == "scale__x4")
        assert entry["signature"] == ["in", "out"] * 4
        # The estimate charges a grouped task four runs of work and one launch: less than four tasks.
        one, four = (r.report["task_estimates"][0]["estimated_device_ns"] for r in (plain, tiled))
        work = (four - one) / 3
        assert 0 < work < one and four == pytest.approx(one + 3 * work) and four < 4 * one
    else:
        # 8 grid points (which no mem tile can feed as 8 core groups) on 2 cores of 4 points each: the grid is
        # mapped spatially instead of host-orchestrated.
        assert not (tmp_path / "plain/codegen/aie/rows/mapping.json").exists()
        mapping = json.loads((pkg.path / "codegen/aie/rows_tiled/mapping.json").read_text())
        assert [c["name"] for c in mapping["cores"]] == ["scale[0:4]", "scale[4:8]"]
        assert all(c["body"][0]["trip"] == 4 for c in mapping["cores"])


def test_a_tile_factor_that_does_not_divide_the_axis_leaves_a_remainder_on_ascend(ctx, program, tmp_path, x):
    # pto-a2a3sim: 8 iterations by 3 are two tasks of three and two of one; an extent known only at run time
    # (7) the same way, from the value the entry gets. aie-npu1 places blocks of grid points on cores, whose
    # FIFOs must move as many objects each: the workload runs host-orchestrated instead, as it was written
    # (it was aie.schedule-tile).
    scales = np.repeat(np.arange(1, 9, dtype=np.float32), 16)[:, None]
    pkg, r = run(ctx, program.rows_bad_tile, "pto-a2a3sim", tmp_path / "static", X=x)
    np.testing.assert_array_equal(np.asarray(r["Y"]), x * scales)
    assert r.report["tasks"] == 4
    assert sorted(p.name for p in (pkg.path / "codegen/pto/kernels").glob("ai?/*.cpp")) == ["scale.cpp", "scale__x3.cpp"]
    pkg, r = run(ctx, program.rows_dyn, "pto-a2a3sim", tmp_path / "dynamic", X=x, n=7)
    np.testing.assert_array_equal(np.asarray(r["Y"])[:112], (x * scales)[:112])
    assert r.report["tasks"] == 3
    orchestration = (pkg.path / "codegen/pto/kernels/orchestration/rows_dyn.cpp").read_text()
    assert "for (int64_t v_i = v_i__extent / 3 * 3; v_i < v_i__extent; ++v_i)" in orchestration
    pkg, r = run(ctx, program.rows_bad_tile, "aie-npu1", tmp_path / "aie", X=x)
    np.testing.assert_array_equal(np.asarray(r["Y"]), x * scales)
    assert r.report["orchestrated"] is True and r.report["tasks"] == 8


def iteration_spans(r):
    """(span of iterations k and k + 1, the sum of their four tasks' times) from the estimated device time, which
    places each task at its dependencies' finish (deterministic, unlike the host's wall clock)."""
    tasks = sorted(r.report["task_estimates"], key=lambda t: t["task"])
    out = []
    for k in range(0, len(tasks) - 2, 2):
        four = tasks[k:k + 4]
        start = min(t["start_ns"] for t in four)
        end = max(t["start_ns"] + t["estimated_device_ns"] for t in four)
        out.append((end - start, sum(t["estimated_device_ns"] for t in four)))
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_pipeline_keeps_iterations_in_flight(ctx, program, tmp_path, x, target):
    expected = sum(np.exp(0.5 * x[16 * k:16 * k + 16]) for k in range(8))
    y0 = np.zeros((16, 64), np.float32)
    _, plain = run(ctx, program.scan, target, tmp_path / "plain", X=x, Y=y0.copy())
    pkg, piped = run(ctx, program.scan_piped, target, tmp_path / "piped", X=x, Y=y0.copy())
    for r in (plain, piped):
        np.testing.assert_allclose(np.asarray(r["Y"]), expected, rtol=1e-5, atol=1e-5)
    _, stream_plain = run(ctx, program.stream, target, tmp_path / "stream", X=x)
    spkg, stream_piped = run(ctx, program.stream_piped, target, tmp_path / "stream_piped", X=x)
    for r in (stream_plain, stream_piped):
        np.testing.assert_array_equal(np.asarray(r["Y"]), 2 * x)
    if target == "pto-a2a3sim":
        # buf gets two slots: produce of iteration k + 1 writes one while consume of iteration k reads the other,
        # so it no longer waits for it. Without pipeline(2) two consecutive iterations take the sum of their
        # tasks' times; with it, less. The critical path drops from all 16 tasks to the consume chain.
        orchestration = (pkg.path / "codegen/pto/kernels/orchestration/scan_piped.cpp").read_text()
        assert "intermediates rotated over slots so that iterations overlap: buf (slot k % 2)" in orchestration
        assert "w_buf_shape[3] = {2, 16, 64}" in orchestration
        assert all(span == pytest.approx(total) for span, total in iteration_spans(plain))
        # (from iteration 2 on: iteration 1's produce starts at once in its fresh slot, so the pair (1, 2) spans
        # from time 0)
        assert all(span < 0.9 * total for span, total in iteration_spans(piped)[2:])
        assert plain.report["estimate"]["critical_path_tasks"] == 16
        assert piped.report["estimate"]["critical_path_tasks"] < 16
        # The simulator's trace runs the produce of iteration k + 1 on another core while consume k waits,
        # never before the slot it overwrites is read (consume of iteration k - 1).
        events = sorted(task_events(piped), key=lambda e: e["args"]["task"])
        for k in range(1, 7):
            produce_next, consume_prev = events[2 * (k + 1)], events[2 * (k - 1) + 1]
            assert produce_next["ts"] >= consume_prev["ts"] + consume_prev["dur"] - 1e-3
    else:
        # The 2 cores' FIFOs hold 3 objects each instead of 2 (triple buffering); scan is host-orchestrated
        # (two kernels per iteration), where a note says pipeline has no effect.
        depths = {f["name"]: f["depth"] for f in json.loads(
            (spkg.path / "codegen/aie/stream_piped/fifos.json").read_text())["fifos"]}
        assert depths and all(d == [3] for d in depths.values()), depths
        plain_depths = {f["name"]: f["depth"] for f in json.loads(
            (tmp_path / "stream/codegen/aie/stream/fifos.json").read_text())["fifos"]}
        assert all(d == [2] for d in plain_depths.values())
        assert "aie.objectfifo @in_X_0" in (spkg.path / "codegen/aie/stream_piped/aie.mlir").read_text()


def test_aie_notes_that_pipeline_does_nothing_for_an_orchestrated_workload(tmp_path):
    import os
    import subprocess
    src = tmp_path / "prog.py"
    src.write_text(PROGRAM)
    host = os.environ["HTP_HOST"]
    r = subprocess.run([host, "compile", str(src), "--target", "aie-npu1", "-o", str(tmp_path / "pkg")],
                       capture_output=True, text=True)
    # (the program's softmax_param buffers a parameter, an error; rows_bad_tile runs host-orchestrated on
    # aie-npu1, saying why)
    assert r.returncode == 1 and "[aie.schedule-buffer]" in r.stderr, r.stderr
    assert ("workload 'rows_bad_tile' runs host-orchestrated on npu1: one task at a time, each kernel a design of "
            "its own (spatially: tile(\"i\", 3) of workload 'rows_bad_tile': axis 'i' has extent 8, not a multiple "
            "of 3) [aie.orchestrated]") in r.stderr, r.stderr
    assert ("pipeline(2) of workload 'scan_piped' has no effect on npu1: a host-orchestrated workload runs one "
            "single-core task at a time") in r.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_buffer_keeps_an_intermediate_in_core_memory(ctx, program, tmp_path, x, target):
    # e passes from shift to normalise: in global memory by default (pto-a2a3sim: 8 tasks; aie-npu1: two launches,
    # host-orchestrated); under buffer("e", "local") both launches are one fused kernel and e stays in the core's
    # memory (pto-a2a3sim: 4 tasks, no e in the orchestration; aie-npu1: one launch, mapped onto 4 cores).
    e = np.exp(0.5 * x[:64])
    expected = e / e.sum(axis=1, keepdims=True)
    plain_pkg, plain = run(ctx, program.softmax, target, tmp_path / "plain", X=x[:64])
    pkg, local = run(ctx, program.softmax_local, target, tmp_path / "local", X=x[:64])
    for r in (plain, local):
        np.testing.assert_allclose(np.asarray(r["Y"]), expected, rtol=1e-5, atol=1e-7)
    if target == "pto-a2a3sim":
        assert plain.report["tasks"] == 8 and local.report["tasks"] == 4
        kernels = pkg.path / "codegen/pto/kernels"
        assert sorted(p.name for p in kernels.glob("ai?/*.cpp")) == ["shift__normalise.cpp"]
        assert "w_e" not in (kernels / "orchestration/softmax_local.cpp").read_text()
        assert "w_e" in (plain_pkg.path / "codegen/pto/kernels/orchestration/softmax.cpp").read_text()
        assert {e["name"] for e in task_events(local)} == {"shift__normalise"}
        # The fused task moves X in and Y out only: half the bytes of the two tasks it replaces.
        work = local.report["estimate"]["kernels"]["shift__normalise"]["work"]
        assert work["bytes_loaded"] == work["bytes_stored"] == 16 * 64 * 4
    else:
        assert (plain_pkg.path / "codegen/aie/softmax/orchestration.json").is_file()
        mapping = json.loads((pkg.path / "codegen/aie/softmax_local/mapping.json").read_text())
        assert [c["name"] for c in mapping["cores"]] == [f"shift__normalise[{i}]" for i in range(4)]
        assert not (pkg.path / "codegen/aie/softmax_local/orchestration.json").exists()


@pytest.mark.parametrize("target", TARGETS)
def test_buffer_says_what_it_cannot_keep(ctx, program, tmp_path, target):
    with pytest.raises(htp.CompileError, match=r"buffer\(\"X\"\) of workload 'softmax_param': 'X' is a parameter; a "
                                               r"parameter lives in the caller's memory"):
        ctx.compile(program.softmax_param, target=target, out=tmp_path / "a", force=True)
    if target == "pto-a2a3sim":
        with pytest.raises(htp.CompileError, match=r"buffer\(\"e\", \"L1\"\) of workload 'softmax_l1': the fused kernel "
                                                   r"'shift__normalise' runs on AIV cores, whose local memory is UB"):
            ctx.compile(program.softmax_l1, target=target, out=tmp_path / "b", force=True)


@pytest.mark.parametrize("target", TARGETS)
def test_buffer_in_l1_feeds_a_matmul(ctx, program, tmp_path, x, target):
    # A tile staged through h into a matmul: under buffer("h", "L1") the fused kernel is cube work only
    # (pto-a2a3sim: one AIC task, the tile handed from L1 to the matmul; aie-npu1: one core).
    a, w = x[:16], x[16:80, :16].copy()
    pkg, r = run(ctx, program.staged_projection, target, tmp_path / "l1", A=a, W=w)
    np.testing.assert_allclose(np.asarray(r["Z"]), a @ w, rtol=1e-5, atol=1e-5)
    a16, w16 = x[:16, :16].copy(), w[:16].copy()
    if target == "pto-a2a3sim":
        assert r.report["tasks"] == 1
        assert [p.relative_to(pkg.path / "codegen/pto/kernels").as_posix()
                for p in (pkg.path / "codegen/pto/kernels").glob("ai?/*.cpp")] == ["aic/stage__project.cpp"]
        # A matmul's result feeding another matmul has to leave the cube core through global memory.
        with pytest.raises(htp.CompileError, match=r"buffer\(\"h\", \"L1\"\) of workload 'two_products': in the "
                                                   r"fused kernel 'square__project2' a matmul takes another matmul's "
                                                   r"result as an operand; an a2a3 cube core moves a result \(L0C\) out "
                                                   r"only to global memory"):
            ctx.compile(program.two_products, target=target, out=tmp_path / "mm", force=True)
    else:
        _, r2 = run(ctx, program.two_products, target, tmp_path / "mm", A=a16, W=w16)
        np.testing.assert_allclose(np.asarray(r2["Z"]), (a16 @ a16) @ w16, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_buffer_refuses_a_fused_read_of_what_the_producer_stored_on_aie(ctx, program, tmp_path, x, target):
    # The consumer reads Y.tile(i), which the producer stores: fused into one launch, aie-npu1 read Y as it was
    # before the run (an AIE task moves its inputs in before its outputs out), silently. pto-a2a3sim runs the fused
    # kernel in program order.
    if target == "pto-a2a3sim":
        _, r = run(ctx, program.reads_back, target, tmp_path / "p", X=x[:64])
        np.testing.assert_allclose(np.asarray(r["Z"]), 5 * x[:64], rtol=1e-6)
        return
    with pytest.raises(htp.CompileError, match=r'buffer\("t", "local"\) of workload .reads_back.: the fused kernel '
                                               r"'doubled_and_tripled__summed' reads 'Y' \(parameter 'y__summed'\) after "
                                               r"it stores it as 'y'; an AIE task moves its inputs in before its outputs "
                                               r"out"):
        ctx.compile(program.reads_back, target=target, out=tmp_path / "a", force=True)


@pytest.mark.parametrize("target", TARGETS)
def test_buffer_says_a_consumer_taking_the_intermediate_twice_cannot_fuse(ctx, program, tmp_path, target):
    # cons(t, t, ...): fused, one of the two arguments lost its tensor, an internal error on both targets
    # (pto.ir "binds no argument to parameter 'b'", aie.task "passes nothing for parameter 'b'").
    with pytest.raises(htp.CompileError, match=r"buffer\(\"t\"\) of workload 'passed_twice': the launch of "
                                               r"'squared_from' at line \d+ passes 't' as 'a' and 'b'; fused launches "
                                               r"pass it once"):
        ctx.compile(program.passed_twice, target=target, out=tmp_path / "p", force=True)


@pytest.mark.parametrize("target", TARGETS)
def test_buffer_fuses_a_producer_reading_what_the_consumer_writes_later(ctx, program, tmp_path, x, target):
    # The producer reads Y.tile(i) before the consumer updates it in place: fused, the read comes first, as
    # unfused. aie-npu1 refused it as reading its own output.
    y = x[:64].copy()
    _, r = run(ctx, program.reads_then_writes, target, tmp_path / "p", Y=y.copy())
    np.testing.assert_allclose(np.asarray(r["Y"]), (y + 1) * y, rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_directives_compose(ctx, program, tmp_path, x, target):
    # Three kernels passing two intermediates, both kept in core memory (two fusions, one after the other),
    # two iterations per task or core, tasks dispatched by block: one kernel of all three runs.
    e = np.exp(0.5 * x).reshape(8, 16, 64)
    expected = (e / e.sum(axis=2, keepdims=True) * np.arange(1, 9, dtype=np.float32)[:, None, None]).reshape(128, 64)
    pkg, r = run(ctx, program.chain, target, tmp_path / "pkg", X=x)
    np.testing.assert_allclose(np.asarray(r["Z"]), expected, rtol=1e-5, atol=1e-7)
    if target == "pto-a2a3sim":
        assert r.report["tasks"] == 4
        kernels = pkg.path / "codegen/pto/kernels"
        assert sorted(p.name for p in kernels.glob("ai?/*.cpp")) == ["shift__normalise__scale__x2.cpp"]
    else:
        mapping = json.loads((pkg.path / "codegen/aie/chain/mapping.json").read_text())
        assert [c["name"] for c in mapping["cores"]] == [f"shift__normalise__scale[{2 * i}:{2 * i + 2}]" for i in range(4)]
