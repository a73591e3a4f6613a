"""CSP processes with statements before and after their loop, written the way a user writes a reduction from
docs/dialects/csp.md: set an accumulator up, add every received item to it, store it (or send it) after the
loop. Such a process was pto.csp on Ascend ("must be one counted loop") and aie.csp-shape on AIE, on both
targets; now the statements around the loop run once each and the accumulator is carried from task to task
(docs/backends/pto.md §6, docs/backends/aie.md §2). Each program runs on both targets against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import htp
from htp.dialects.csp import Channel, process, program, recv, replicate, send
from htp.dialects.tile import In, Out, Scalar, Tensor, Tile, add, exp, f32, full, i32, load, matmul, mul, muls, store

TARGETS = ["pto-a2a3sim", "aie-npu1"]

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_a_collector_accumulates_what_it_receives_and_stores_it_after_its_loop": [
        ("CSP process with statements before and after its loop", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_reducer_sends_its_result_after_its_loop": [
        ("CSP process sending after its loop", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_replicated_reducers_each_carry_their_own_accumulator": [
        ("CSP process with statements before and after its loop", t) for t in ("pto-a2a3sim", "aie-npu1")],
}


@program
def rowsum(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[16, 64, f32]]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[loaded])
    def collector():
        acc = full((16, 64), 0.0, dtype=f32)
        for i in range(8):
            acc = add(acc, recv(loaded))
        store(Y.tile(0, 0, shape=(16, 64)), acc)


@program
def reduce_send(X: In[Tensor[128, 64, f32]], B: In[Tensor[16, 64, f32]], Y: Out[Tensor[16, 64, f32]]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)
    total = Channel[Tile[16, 64, f32]](depth=1)

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[loaded], produces=[total])
    def reducer():
        acc = load(B.tile(0, 0, shape=(16, 64)))    # before the loop: a tensor read once
        for i in range(8):
            acc = add(acc, exp(recv(loaded)))
        send(total, mul(acc, acc))                  # after the loop: one item

    @process(consumes=[total])
    def storer():
        store(Y.tile(0, 0, shape=(16, 64)), recv(total))


@program
def tree(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[16, 64, f32]]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)
    partial = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    def reduce_share():                 # each replica takes every other item
        acc = full((16, 64), 0.0, dtype=f32)
        for i in range(4):
            acc = add(acc, recv(loaded))
        send(partial, acc)

    reducer = process("reducer").consumes(loaded).produces(partial).body(reduce_share)
    replicate(reducer, 2)

    @process(consumes=[partial])
    def collector():
        acc = full((16, 64), 1.0, dtype=f32)
        for i in range(2):
            acc = add(acc, recv(partial))
        store(Y.tile(0, 0, shape=(16, 64)), acc)


@program
def counted(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[16, 64, f32]], n: Scalar[i32]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(n):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[loaded])
    def collector():
        acc = full((16, 64), 0.5, dtype=f32)
        for i in range(n):              # a bound known at run time only
            acc = add(acc, recv(loaded))
        store(Y.tile(0, 0, shape=(16, 64)), acc)


def blocks(seed):
    return np.random.default_rng(seed).random((128, 64), dtype=np.float32)


def compile_run(tmp_path, fn, target, **args):
    ctx = htp.Context()
    pkg = ctx.compile(fn, target, tmp_path / target)
    return pkg, htp.bind(pkg, ctx).run(**args)


@pytest.mark.parametrize("target", TARGETS)
def test_a_collector_accumulates_what_it_receives_and_stores_it_after_its_loop(tmp_path, target):
    x = blocks(41)
    pkg, r = compile_run(tmp_path, rowsum, target, X=x)
    # f32 additions in the loop's order, as NumPy adds along an axis of 8
    np.testing.assert_allclose(np.asarray(r["Y"]), x.reshape(8, 16, 64).sum(0), rtol=1e-6)
    if target == "pto-a2a3sim":
        # The statements around the loop are tasks of their own; the accumulator travels through a carry tensor.
        kernels = sorted(p.name for p in (pkg.path / "codegen/pto/kernels/aiv").glob("rowsum_collector*.cpp"))
        assert kernels == ["rowsum_collector.cpp", "rowsum_collector__after.cpp", "rowsum_collector__before.cpp"]
        orchestration = (pkg.path / "codegen/pto/kernels/orchestration/rowsum.cpp").read_text()
        assert "w_carry_collector__carry_acc" in orchestration


@pytest.mark.parametrize("target", TARGETS)
def test_a_reducer_sends_its_result_after_its_loop(tmp_path, target):
    x = blocks(42)
    b = np.random.default_rng(43).random((16, 64), dtype=np.float32)
    _, r = compile_run(tmp_path, reduce_send, target, X=x, B=b)
    want = (b + np.exp(x.reshape(8, 16, 64)).sum(0)) ** 2
    np.testing.assert_allclose(np.asarray(r["Y"]), want, rtol=2e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_replicated_reducers_each_carry_their_own_accumulator(tmp_path, target):
    x = blocks(44)
    _, r = compile_run(tmp_path, tree, target, X=x)
    # replica r takes items r, r + 2, ...; the collector adds both partial sums to 1
    np.testing.assert_allclose(np.asarray(r["Y"]), 1 + x.reshape(8, 16, 64).sum(0), rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [0, 3, 8])
def test_a_collector_loop_to_a_runtime_bound_runs_its_statements_once_each(tmp_path, target, n):
    x = blocks(45)
    _, r = compile_run(tmp_path, counted, target, X=x, n=n)
    # zero iterations: what the statements before the loop set up is what is stored
    np.testing.assert_allclose(np.asarray(r["Y"]), 0.5 + x[:16 * n].reshape(n, 16, 64).sum(0), rtol=1e-6)


@program
def two_loops(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[16, 64, f32]]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[loaded])
    def collector():
        acc = full((16, 64), 0.0, dtype=f32)
        for i in range(4):
            acc = add(acc, recv(loaded))
        for i in range(4):
            acc = mul(acc, recv(loaded))
        store(Y.tile(0, 0, shape=(16, 64)), acc)


@pytest.mark.parametrize("target,code", [("pto-a2a3sim", "pto.csp"), ("aie-npu1", "aie.csp-shape")])
def test_a_process_with_two_loops_is_an_error_naming_them(tmp_path, target, code):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(two_loops, target, tmp_path / target)
    assert code in str(e.value)
    assert "its body has 2 loops; a process runs one" in str(e.value)


@program
def counting(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[16, 64, f32]]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[loaded])
    def collector():
        acc = full((16, 64), 0.0, dtype=f32)
        n = 0
        for i in range(8):
            acc = add(acc, recv(loaded))
            n = n + 1
        store(Y.tile(0, 0, shape=(16, 64)), acc)


@pytest.mark.parametrize("target,code", [("pto-a2a3sim", "pto.csp"), ("aie-npu1", "aie.csp-shape")])
def test_a_scalar_register_carried_around_the_loop_is_an_error_naming_it(tmp_path, target, code):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(counting, target, tmp_path / target)
    assert code in str(e.value)
    line = next(i for i, l in enumerate(open(__file__).read().splitlines(), 1) if l.strip() == "n = 0")
    assert f"scalar register 'n' (set on line {line}) is carried across a loop's iterations or around it" in str(e.value)


@program
def scaled(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[16, 64, f32]], s: Scalar[f32]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(4):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[loaded])
    def collector():
        c = s * 2.0                     # set once before the loop from a scalar of the program
        acc = full((16, 64), 0.0, dtype=f32)
        for i in range(4):
            acc = add(acc, muls(recv(loaded), c))
        store(Y, acc)


@pytest.mark.parametrize("target", TARGETS)
def test_a_scalar_set_once_before_the_loop_is_computed_again_where_it_is_read(tmp_path, target):
    # It was an error, "carried" like an accumulator, though it never changes.
    x = np.random.default_rng(46).random((64, 64), dtype=np.float32)
    _, r = compile_run(tmp_path, scaled, target, X=x, s=1.5)
    np.testing.assert_allclose(np.asarray(r["Y"]), (x.reshape(4, 16, 64) * 3.0).sum(0), rtol=1e-6)


@program
def matmul_collector(X: In[Tensor[128, 32, f32]], W: In[Tensor[32, 32, f32]], Y: Out[Tensor[16, 32, f32]]):
    loaded = Channel[Tile[16, 32, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(16, 32))))

    @process(consumes=[loaded])
    def collector():
        w = load(W)
        acc = full((16, 32), 0.0, dtype=f32)
        for i in range(8):
            acc += matmul(recv(loaded), w)
        store(Y, acc)


@program
def scaled_scores(Q: In[Tensor[64, 32, f32]], K: In[Tensor[32, 32, f32]], S: Out[Tensor[64, 32, f32]]):
    rows = Channel[Tile[16, 32, f32]](depth=2)

    @process(produces=[rows])
    def loader():
        for i in range(4):
            send(rows, load(Q.tile(i, 0, shape=(16, 32))))

    @process(consumes=[rows])
    def qk():
        k = load(K)
        for i in range(4):
            store(S.tile(i, 0, shape=(16, 32)), muls(matmul(recv(rows), k), 0.5))


def test_a_process_that_needs_both_ascend_core_types_says_how_to_split_it(tmp_path):
    # aie-npu1 runs both programs; on Ascend a task runs on one core type. The errors named a derived kernel and
    # advised "exchanging tensors", or that a loaded accumulator should start with full(...), which it did.
    rng = np.random.default_rng(47)
    x, w = rng.standard_normal((128, 32), dtype=np.float32), rng.standard_normal((32, 32), dtype=np.float32)
    _, r = compile_run(tmp_path, matmul_collector, "aie-npu1", X=x, W=w)
    np.testing.assert_allclose(np.asarray(r["Y"]), sum(b @ w for b in x.reshape(8, 16, 32)), rtol=1e-4, atol=1e-4)
    q, k = rng.standard_normal((64, 32), dtype=np.float32), rng.standard_normal((32, 32), dtype=np.float32)
    _, r = compile_run(tmp_path / "s", scaled_scores, "aie-npu1", Q=q, K=k)
    np.testing.assert_allclose(np.asarray(r["S"]), (q @ k) * 0.5, rtol=1e-5, atol=1e-5)
    for fn, said in [(matmul_collector, "process 'collector' of CSP program 'matmul_collector' accumulates matmuls "
                                         "into 'acc', which it carries from one iteration to the next"),
                     (scaled_scores, "process 'qk' of CSP program 'scaled_scores' does cube work (pto.matmul) and "
                                     "vector work (pto.muls) in one task")]:
        with pytest.raises(htp.CompileError) as e:
            htp.Context().compile(fn, "pto-a2a3sim", tmp_path / ("pto_" + fn.__name__))
        assert "pto.csp" in str(e.value) and said in str(e.value), str(e.value)


@program
def sending_scan(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[128, 64, f32]], T: Out[Tensor[16, 64, f32]]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)
    snaps = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[loaded], produces=[snaps])
    def scanner():
        acc = full((16, 64), 0.0, dtype=f32)
        for i in range(8):
            send(snaps, acc)            # the running value before this item, then the item: a receive after a send
            t = recv(loaded)
            acc = add(muls(acc, 0.5), t)
        store(T, acc)

    @process(consumes=[snaps])
    def storer():
        for i in range(8):
            store(Y.tile(i, 0, shape=(16, 64)), recv(snaps))


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_that_receives_after_it_sends_carries_its_accumulator_through_both_steps(tmp_path, target):
    # Ascend runs such an iteration as two tasks; the accumulator, carried across iterations, reached only the
    # first ("uses register 'acc' on both sides of that receive"). Each step now loads it and stores it.
    x = blocks(48)
    _, r = compile_run(tmp_path, sending_scan, target, X=x)
    acc, snaps = np.zeros((16, 64), np.float32), []
    for b in x.reshape(8, 16, 64):
        snaps.append(acc.copy())
        acc = acc * np.float32(0.5) + b
    np.testing.assert_allclose(np.asarray(r["Y"]), np.concatenate(snaps), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(r["T"]), acc, rtol=1e-6)


# csp.md bounds a channel's depth by nothing ("N >= 1 slots"). On pto-a2a3sim a depth of 2**32 + 1 for two items
# stopped the run in the runtime ("ChipTensor::view: dimension 0 out of range", no location), and 10**8 with
# std::bad_alloc: the ring held `depth` slots. A channel never holds more than the items it carries.
@program
def deep_channel(X: In[Tensor[16, 64, f32]], Y: Out[Tensor[16, 64, f32]]):
    c = Channel[Tile[8, 64, f32]](depth=2**32 + 1)

    @process(produces=[c])
    def producer():
        for i in range(2):
            send(c, load(X.tile(i, 0, shape=(8, 64))))

    @process(consumes=[c])
    def consumer():
        for i in range(2):
            store(Y.tile(i, 0, shape=(8, 64)), exp(recv(c)))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_channel_deeper_than_its_items(tmp_path, target):
    ctx = htp.Context()
    x = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)
    r = htp.bind(ctx.compile(deep_channel, target=target, out=tmp_path / "p"), ctx).run(X=x)
    np.testing.assert_allclose(r["Y"], np.exp(x), rtol=1e-5)


# A program decorated with another surface name (`@Channel` for `@program`) was "the program has no kernel,
# workload or CSP program" at no line (aie-npu1: no file either). The error is at the function, naming its
# decorator.
@Channel
def misdecorated(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    c = Channel[Tile[16, 32, f32]](depth=2)

    @process(produces=[c])
    def p():
        for i in range(4):
            send(c, load(X.tile(i, 0, shape=(16, 32))))

    @process(consumes=[c])
    def q():
        for i in range(4):
            store(Y.tile(i, 0, shape=(16, 32)), recv(c))


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_program_under_another_decorator_is_an_error_at_it(tmp_path, target):
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(misdecorated, target=target, out=tmp_path / "p")
    [d] = e.value.errors
    line = [i for i, t in enumerate(open(__file__).read().splitlines(), 1) if t == "@Channel"][0]
    assert (d.code, d.span["file"], d.span["line"]) == (target.split("-")[0] + ".no-entry", __file__, line + 1), d
    assert d.message.endswith(": 'misdecorated' is decorated with @Channel, which makes none of them (@kernel, "
                              "@workload or @program does)")


# A kernel decorated with a tile op by mistake (`@full` for `@kernel`, a fuzzer's rename) or not decorated at all:
# compile raised a bare TypeError from inside capture ("expected a function decorated by a dialect decorator, got
# Symbol"). It is a CompileError at the decorator (the def) naming what was written.
from htp.dialects.tile import full  # noqa: E402


@full
def tile_op_decorated(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]]):
    store(y, load(x))


def undecorated(x: In[Tensor[16, 32, f32]], y: Out[Tensor[16, 32, f32]]):
    store(y, load(x))


def test_a_kernel_under_a_tile_op_or_no_decorator_is_an_error_at_it(tmp_path):
    lines = open(__file__).read().splitlines()
    for fn, first, what in ((tile_op_decorated, "@full", "is decorated with @full, which is not a dialect decorator"),
                            (undecorated, "def undecorated(", "is not decorated by a dialect decorator")):
        with pytest.raises(htp.CompileError) as e:
            htp.Context().compile(fn, target="pto-a2a3sim", out=tmp_path / "p")
        [d] = e.value.errors
        line = [i for i, t in enumerate(lines, 1) if t.startswith(first)][0]
        assert (d.code, d.span["file"], d.span["line"]) == ("capture.not-captured", __file__, line), d
        assert what in d.message and "decorate it with @kernel, @workload or @program" in d.message, d.message


# A collector with statements around its loop, in a program with links (the distribute and join of csp.md's
# fan-out): aie-npu1 refused it ("links channels with connect(...), which a host-orchestrated program does not
# take"), since only the host-orchestrated mapping took a process cut around its loop. The cut now runs on the
# cores: `proc_<p>__before` and `proc_<p>__after` called once around the core loop, the accumulator in a buffer
# of the core.
from htp.dialects.csp import connect  # noqa: E402
from htp.dialects.tile import adds, relu  # noqa: E402


@program
def fan_and_total(X: In[Tensor[256, 64, f32]], W: In[Tensor[16, 64, f32]], Y: Out[Tensor[256, 64, f32]],
                  T: Out[Tensor[16, 64, f32]], s: float):
    a = Channel[Tile[16, 64, f32]](depth=2)
    left = Channel[Tile[16, 64, f32]](depth=2)
    right = Channel[Tile[16, 64, f32]](depth=2)
    lo = Channel[Tile[16, 64, f32]](depth=2)
    ro = Channel[Tile[16, 64, f32]](depth=2)
    joined = Channel[Tile[16, 64, f32]](depth=2)
    total = Channel[Tile[16, 64, f32]](depth=1)

    @process(produces=[a])
    def src():
        for i in range(16):
            send(a, muls(load(X.tile(i, 0, shape=(16, 64))), s))

    connect([a], [left, right])

    @process(consumes=[left], produces=[lo])
    def wl():
        for k in range(8):
            send(lo, relu(recv(left)))

    @process(consumes=[right], produces=[ro])
    def wr():
        for k in range(8):
            send(ro, add(recv(right), load(W)))

    connect([lo, ro], [joined])

    @process(consumes=[joined], produces=[total])
    def sink():
        acc = full((16, 64), 0.0, f32)
        for i in range(16):
            t = recv(joined)
            store(Y.tile(i, 0, shape=(16, 64)), t)
            acc = add(acc, t)
        send(total, muls(acc, s))

    @process(consumes=[total])
    def fin():
        store(T, adds(recv(total), 1.0))


@pytest.mark.parametrize("target", TARGETS)
def test_a_collector_beside_links_runs_on_the_cores(tmp_path, target):
    rng = np.random.default_rng(41)
    x = rng.standard_normal((256, 64)).astype(np.float32)
    w = rng.standard_normal((16, 64)).astype(np.float32)
    ctx = htp.Context()
    pkg = ctx.compile(fan_and_total, target, tmp_path / "p")
    r = htp.bind(pkg, ctx).run(X=x, W=w, s=1.5)
    y = (x * np.float32(1.5)).reshape(16, 16, 64)
    y[0::2] = np.maximum(y[0::2], 0)
    y[1::2] += w
    np.testing.assert_allclose(np.asarray(r["Y"]), y.reshape(256, 64), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(r["T"]), y.sum(0) * np.float32(1.5) + 1, rtol=1e-4, atol=1e-4)
    if target == "aie-npu1":
        [mlir] = (pkg.path / "codegen/aie").rglob("aie.mlir")
        text = mlir.read_text()
        assert "func.call @proc_sink__before(" in text and "func.call @proc_sink__after(" in text
        assert "aie.buffer" in text and not list(pkg.path.rglob("orchestration.json"))
