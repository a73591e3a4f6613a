"""CSP programs that do not fit an AIE device spatially, written as docs/dialects/csp.md writes them: the
page's own `fanout` (a generator feeding four replicated workers 16 KB items through depth-4 channels)
needed 289 KB on the generator's core and four output DMA channels, and a program with more process replicas
than the device has cores was aie.grid-too-large. backend-aie now runs such a program host-orchestrated
(docs/backends/aie.md §2): each process replica a stage of tasks, one per iteration, in producer-to-
consumer order. Ascend runs them as they are; both against NumPy."""
from __future__ import annotations

import json

import numpy as np
import pytest

import htp
from htp.dialects.csp import Channel, Event, connect, consume, process, program, recv, replicate, send
from htp.dialects.tile import (In, InOut, Out, Scalar, Tensor, Tile, add, adds, colexpand_mul, exp, f32, i32, load, matmul, muls, relu,
                               rowexpand_div, rowexpand_sub, rowmax, rowsum, store, tanh, transpose)

TARGETS = ["pto-a2a3sim", "aie-npu1"]

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_the_docs_fanout_runs_on_both_targets": [
        ("CSP program larger than a core's memory", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_more_process_replicas_than_cores_run_on_both_targets": [
        ("CSP program with more process replicas than cores", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_process_reads_back_tiles_it_stored_in_earlier_iterations": [
        ("CSP process reading back an `InOut` tensor it stores", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_stores_under_a_condition_run_on_both_targets": [
        ("CSP process storing under an `if`", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_branches_the_host_decides_run_on_both_targets": [
        (row, t) for row in ("CSP process sending in each branch of an `if`",
                             "CSP process reading the previous tile under `if i == 0`")
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_straight_line_processes_and_two_items_of_a_channel_per_iteration_run": [
        ("CSP process sending or receiving twice on one channel per iteration", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_one_input_read_through_two_views_per_iteration": [
        ("CSP process reading one input through two views per iteration", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_process_appending_to_a_cache_at_a_runtime_position": [
        ("CSP process storing at an offset known only at run time", t) for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_tile_crossing_the_steps_of_an_iteration": [
        ("CSP process using a tile across the steps of an iteration", t) for t in ("pto-a2a3sim", "aie-npu1")],
}


@program
def fanout(X: In[Tensor[512, 128, f32]], Y: Out[Tensor[512, 128, f32]]):
    work = Channel[Tile[32, 128, f32]](depth=4)
    done = Channel[Tile[32, 128, f32]](depth=4, pack=2)

    def generate():
        for i in range(16):
            send(work, load(X.tile(i, 0, shape=(32, 128))))

    def work_on():                       # each of the 4 replicas takes 4 items from the shared channel
        for k in range(4):
            send(done, relu(recv(work)))

    def collect():
        for i in range(16):
            store(Y.tile(i, 0, shape=(32, 128)), recv(done))

    process("generator").produces(work).body(generate)
    worker = process("worker").consumes(work).produces(done).body(work_on)
    process("collector").consumes(done).body(collect)
    replicate(worker, 4)


def compile_run(tmp_path, fn, target, **args):
    ctx = htp.Context()
    pkg = ctx.compile(fn, target, tmp_path / target)
    return pkg, htp.bind(pkg, ctx).run(**args)


def orchestration(pkg, entry):
    return json.loads((pkg.path / "codegen/aie" / entry / "orchestration.json").read_text())


@pytest.mark.parametrize("target", TARGETS)
def test_the_docs_fanout_runs_on_both_targets(tmp_path, target):
    x = np.random.default_rng(31).standard_normal((512, 128)).astype(np.float32)
    pkg, r = compile_run(tmp_path, fanout, target, X=x)
    np.testing.assert_array_equal(np.asarray(r["Y"]), np.maximum(x, 0))
    if target == "aie-npu1":
        # The generator, each worker replica and the collector are stages, in producer-to-consumer order; a
        # worker's task receives an item and sends one, its iteration kernel the process body.
        doc = orchestration(pkg, "fanout")
        stages = doc["workload"]["body"]
        assert [s["body"][0]["kernel"] for s in stages] == (
            ["generate__iter"] + ["work_on__iter"] * 4 + ["collect__iter"])
        assert [s["domain"]["extent"] for s in stages] == [16, 4, 4, 4, 4, 16]
        worker = stages[1]["body"][0]["args"]
        assert [(a["param"], a.get("channel"), a["dir"]) for a in worker] == [
            ("recv_work", "work", "in"), ("send_done", "done", "out")]
        assert set(doc["channels"]) == {"work", "done"}
        assert [e["name"] for e in pkg.entrypoints] == ["fanout"] and pkg.entrypoints[0]["orchestrated"]


@program
def many_workers(X: In[Tensor[640, 64, f32]], Y: Out[Tensor[640, 64, f32]]):
    work = Channel[Tile[16, 64, f32]](depth=2)
    done = Channel[Tile[16, 64, f32]](depth=2)

    def generate():
        for i in range(40):
            send(work, load(X.tile(i, 0, shape=(16, 64))))

    def work_on():
        for k in range(2):
            send(done, exp(recv(work)))

    def collect():
        for i in range(40):
            store(Y.tile(i, 0, shape=(16, 64)), recv(done))

    process("generator").produces(work).body(generate)
    worker = process("worker").consumes(work).produces(done).body(work_on)
    process("collector").consumes(done).body(collect)
    replicate(worker, 20)               # 22 processes: more than npu1's 16 compute tiles


@pytest.mark.parametrize("target", TARGETS)
def test_more_process_replicas_than_cores_run_on_both_targets(tmp_path, target):
    x = np.random.default_rng(32).standard_normal((640, 64)).astype(np.float32)
    pkg, r = compile_run(tmp_path, many_workers, target, X=x)
    np.testing.assert_allclose(np.asarray(r["Y"]), np.exp(x), rtol=1e-6)
    if target == "aie-npu1":
        stages = orchestration(pkg, "many_workers")["workload"]["body"]
        assert len(stages) == 22
        # Every task of the orchestration has an id of its own.
        ids = [s["body"][0]["id"] for s in stages]
        assert len(set(ids)) == len(ids)


@program
def indexed(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]], s: Scalar[f32]):
    rows = Channel[Tile[32, 128, f32]](depth=4)

    @process(produces=[rows])
    def reader():
        for i in range(8):
            send(rows, adds(load(X.tile(i, 0, shape=(32, 128))), i))   # the loop variable as a value

    @process(consumes=[rows])
    def writer():
        for j in range(1, 17, 2):                                      # a loop not from 0 by 1
            store(Y[(j // 2) * 32:(j // 2) * 32 + 32, :], muls(recv(rows), s))


@pytest.mark.parametrize("target", TARGETS)
def test_a_runtime_scalar_and_the_loop_variable_reach_the_tasks(tmp_path, target):
    # Depth-4 channels of 16 KB items do not fit one AIE core beside the input FIFO: host-orchestrated, the
    # reader's task takes i (start + step x its iteration) as a scalar, the writer's the program's s.
    x = np.random.default_rng(33).standard_normal((256, 128)).astype(np.float32)
    pkg, r = compile_run(tmp_path, indexed, target, X=x, s=1.5)
    want = (x + np.repeat(np.arange(8, dtype=np.float32), 32)[:, None]) * np.float32(1.5)
    np.testing.assert_allclose(np.asarray(r["Y"]), want, rtol=1e-6)
    if target == "aie-npu1":
        reader, writer = (s["body"][0]["args"] for s in orchestration(pkg, "indexed")["workload"]["body"])
        assert [a["param"] for a in reader] == ["in_X", "send_rows", "it_i"]
        assert [a["param"] for a in writer] == ["s", "recv_rows", "out_Y"]


@program
def handshake_big(X: In[Tensor[128, 128, f32]], Y: Out[Tensor[128, 128, f32]]):
    data = Channel[Tile[32, 128, f32]](depth=4)
    ready = Event()

    @process(consumes=[ready], produces=[data])
    def producer():
        for i in range(4):
            recv(ready)
            send(data, load(X.tile(i, 0, shape=(32, 128))))

    @process(produces=[ready], consumes=[data])
    def consumer():
        for i in range(4):
            send(ready)
            store(Y.tile(i, 0, shape=(32, 128)), recv(data))


def test_a_rendezvous_that_does_not_fit_says_why_the_host_cannot_run_it(tmp_path):
    # Processes meeting at an event cannot run one after another: the memory error stands, and a note says
    # why the host-orchestrated mapping did not take the program either.
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(handshake_big, "aie-npu1", tmp_path / "pkg")
    text = str(e.value)
    assert any(d.code == "aie.validate.memory" for d in e.value.errors), text
    # (a design names the source by its file name; the diagnostic names the module's file as the others do)
    assert f"{__file__}:" in text.split("aie.validate.memory")[0].splitlines()[-1], text
    assert "nor can the host orchestrate it: event 'ready' is a rendezvous" in text, text
    x = np.random.default_rng(34).standard_normal((128, 128)).astype(np.float32)
    _, r = compile_run(tmp_path, handshake_big, "pto-a2a3sim", X=x)
    np.testing.assert_array_equal(np.asarray(r["Y"]), x)


@program
def scale_rows(X: In[Tensor[256, 64, f32]], G: In[Tensor[1, 64, f32]], Y: Out[Tensor[256, 64, f32]]):
    work = Channel[Tile[32, 64, f32]](depth=2)
    done = Channel[Tile[32, 64, f32]](depth=2)

    @process(produces=[work])
    def gen():
        for i in range(8):
            send(work, load(X.tile(i, 0, shape=(32, 64))))

    @process(consumes=[work], produces=[done])
    def worker():
        g = load(G)                      # read once, before the stream loop
        for t in consume(work):
            send(done, tanh(colexpand_mul(t, g)))

    @process(consumes=[done])
    def sink():
        for i in range(8):
            store(Y.tile(i, 0, shape=(32, 64)), recv(done))

    replicate(worker, 2)


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_that_loads_before_its_loop_runs(tmp_path, target):
    # csp.md: a process body is a tile body; both backends took one loop only (pto.csp / aie.csp-shape). The
    # load before the loop now moves into it (G does not change), so the body is one loop.
    x = np.random.default_rng(35).standard_normal((256, 64)).astype(np.float32)
    g = np.random.default_rng(36).standard_normal((1, 64)).astype(np.float32)
    _, r = compile_run(tmp_path, scale_rows, target, X=x, G=g)
    np.testing.assert_allclose(np.asarray(r["Y"]), np.tanh(x * g), rtol=1e-5, atol=1e-6)


@program
def softmax_n(X: In[Tensor[256, 64, f32]], n: Scalar[i32], temp: Scalar[f32], Y: Out[Tensor[256, 64, f32]]):
    loaded = Channel[Tile[64, 64, f32]](depth=2)
    computed = Channel[Tile[64, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(n):
            send(loaded, load(X.tile(i, 0, shape=(64, 64))))

    @process(consumes=[loaded], produces=[computed])
    def compute():
        for t in consume(loaded):
            s = muls(t, temp)
            e = exp(rowexpand_sub(s, rowmax(s)))
            send(computed, rowexpand_div(e, rowsum(e)))

    @process(consumes=[computed])
    def storer():
        for i in range(n):
            store(Y.tile(i, 0, shape=(64, 64)), recv(computed))


@pytest.mark.parametrize("target", TARGETS)
def test_a_trip_count_known_at_run_time_runs_on_both_targets(tmp_path, target):
    # csp.md: counts may be program scalars. An AIE core loop needs static bounds (aie.csp-shape); the
    # host-orchestrated program evaluates n per run — one package, two values of n.
    ctx = htp.Context()
    pkg = ctx.compile(softmax_n, target, tmp_path / target)
    x = np.random.default_rng(37).standard_normal((256, 64)).astype(np.float32)
    for n in (2, 4):
        y = np.asarray(htp.bind(pkg, ctx).run(X=x, n=n, temp=0.5)["Y"])[:n * 64]
        s = x[:n * 64] * 0.5
        e = np.exp(s - s.max(1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


@program
def straight(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[64, 64, f32]]):
    c = Channel[Tile[32, 64, f32]](depth=2)

    @process(produces=[c])
    def p():                             # straight-line code: one iteration
        send(c, load(X.tile(1, 0, shape=(32, 64))))

    @process(consumes=[c])
    def q():
        store(Y.tile(0, 0, shape=(32, 64)), adds(recv(c), 1.0))


@program
def twice(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[128, 64, f32]]):
    c = Channel[Tile[32, 64, f32]](depth=4)

    @process(produces=[c])
    def p():
        for i in range(2):
            send(c, load(X.tile(2 * i, 0, shape=(32, 64))))
            send(c, load(X.tile(2 * i + 1, 0, shape=(32, 64))))

    @process(consumes=[c])
    def q():
        for i in range(4):
            store(Y.tile(i, 0, shape=(32, 64)), adds(recv(c), 1.0))


# Two receives of one channel in one iteration, each item used on its own (the second computed first).
@program
def twice_received(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[128, 64, f32]]):
    c = Channel[Tile[32, 64, f32]](depth=1)

    @process(produces=[c])
    def p():
        for i in range(2):
            send(c, load(X.tile(2 * i, 0, shape=(32, 64))))
            send(c, exp(load(X.tile(2 * i + 1, 0, shape=(32, 64)))))

    @process(consumes=[c])
    def q():
        for i in range(2):
            store(Y.tile(2 * i + 1, 0, shape=(32, 64)), muls(recv(c), 2.0))
            store(Y.tile(2 * i, 0, shape=(32, 64)), recv(c))


@pytest.mark.parametrize("target", TARGETS)
def test_straight_line_processes_and_two_items_of_a_channel_per_iteration_run(tmp_path, target):
    # csp.md: a process body is a counted loop or straight-line code; backend-pto took loops only (pto.csp).
    x = np.random.default_rng(38).standard_normal((64, 64)).astype(np.float32)
    _, r = compile_run(tmp_path, straight, target, X=x)
    np.testing.assert_array_equal(np.asarray(r["Y"])[:32], x[32:] + 1)
    # Two sends (or receives) on one channel in one iteration: AIE's core moves two objects; backend-pto's task
    # moves one item per channel, and said "sends to channel 'c' more than once per iteration" (pto.csp). The
    # iteration runs as two steps now, the j-th moving item 2k + j.
    x = np.random.default_rng(39).standard_normal((128, 64)).astype(np.float32)
    _, r = compile_run(tmp_path / "twice", twice, target, X=x)
    np.testing.assert_array_equal(np.asarray(r["Y"]), x + 1)
    _, r = compile_run(tmp_path / "received", twice_received, target, X=x)
    want = np.empty_like(x)
    for i in range(2):
        want[64 * i + 32:64 * i + 64] = 2 * x[64 * i:64 * i + 32]
        want[64 * i:64 * i + 32] = np.exp(x[64 * i + 32:64 * i + 64])
    np.testing.assert_allclose(np.asarray(r["Y"]), want, rtol=1e-6, atol=1e-6)


# A process that reads an InOut tensor it stores, as csp.md and tile.md let a user write it. An AIE core streams
# a process's loads from the start of the run, unordered with its stores, so aie-npu1 returned the tensor's
# first contents without a word (all of Z wrong below). A load of the view stored earlier in the same iteration
# now reads the stored register; any other read after a write runs host-orchestrated (aie.csp-order), one
# iteration after another; a read-modify-write of a different tile each item stays spatial.
from htp.dialects.tile import InOut, add  # noqa: E402

R, C = 8, 32


@program
def store_then_load(X: In[Tensor[4 * R, C, f32]], Y: InOut[Tensor[4 * R, C, f32]], Z: Out[Tensor[4 * R, C, f32]]):
    ch = Channel[Tile[R, C, f32]](depth=2)

    @process(produces=[ch])
    def gen():
        for i in range(4):
            send(ch, load(X.tile(i, 0, shape=(R, C))))

    @process(consumes=[ch])
    def sink():
        for i in range(4):
            store(Y.tile(i, 0, shape=(R, C)), recv(ch))
            store(Z.tile(i, 0, shape=(R, C)), muls(load(Y.tile(i, 0, shape=(R, C))), 2.0))


@program
def prefix_scan(X: In[Tensor[6 * R, C, f32]], Y: InOut[Tensor[6 * R, C, f32]]):
    ch = Channel[Tile[R, C, f32]](depth=2)

    @process(produces=[ch])
    def gen():
        for i in range(5):
            send(ch, load(X.tile(i, 0, shape=(R, C))))

    @process(consumes=[ch])
    def scan():
        for i in range(5):
            store(Y.tile(i + 1, 0, shape=(R, C)), add(load(Y.tile(i, 0, shape=(R, C))), recv(ch)))


@program
def accumulate(X: In[Tensor[4 * R, C, f32]], Y: InOut[Tensor[R, C, f32]]):
    ch = Channel[Tile[R, C, f32]](depth=2)

    @process(produces=[ch])
    def gen():
        for i in range(4):
            send(ch, load(X.tile(i, 0, shape=(R, C))))

    @process(consumes=[ch])
    def col():
        for i in range(4):
            store(Y, add(load(Y), recv(ch)))


@program
def update_tiles(X: In[Tensor[4 * R, C, f32]], Y: InOut[Tensor[4 * R, C, f32]]):
    ch = Channel[Tile[R, C, f32]](depth=2)

    @process(produces=[ch])
    def gen():
        for i in range(4):
            send(ch, load(X.tile(i, 0, shape=(R, C))))

    @process(consumes=[ch])
    def col():
        for i in range(4):
            store(Y.tile(i, 0, shape=(R, C)), add(load(Y.tile(i, 0, shape=(R, C))), recv(ch)))


def _orchestrated(pkg, entry):
    return (pkg.path / "codegen/aie" / entry / "orchestration.json").exists()


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_reads_back_the_view_it_stored_in_the_iteration(tmp_path, target):
    rng = np.random.default_rng(60)
    X = rng.standard_normal((4 * R, C), dtype=np.float32)
    pkg, r = compile_run(tmp_path, store_then_load, target, X=X, Y=np.full((4 * R, C), 5.0, np.float32))
    np.testing.assert_array_equal(r["Y"], X)
    np.testing.assert_array_equal(r["Z"], 2 * X)
    if target == "aie-npu1":
        assert not _orchestrated(pkg, "store_then_load"), "the load reads the stored register: still spatial"


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_reads_back_tiles_it_stored_in_earlier_iterations(tmp_path, target):
    rng = np.random.default_rng(57)
    X = rng.standard_normal((6 * R, C), dtype=np.float32)
    pkg, r = compile_run(tmp_path, prefix_scan, target, X=X, Y=np.zeros((6 * R, C), np.float32))
    want = np.zeros((6 * R, C), np.float32)
    for i in range(5):
        want[(i + 1) * R:(i + 2) * R] = want[i * R:(i + 1) * R] + X[i * R:(i + 1) * R]
    np.testing.assert_allclose(r["Y"], want, rtol=1e-6, atol=1e-6)
    if target == "aie-npu1":
        assert _orchestrated(pkg, "prefix_scan")


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_accumulates_items_into_one_inout_tile(tmp_path, target):
    rng = np.random.default_rng(37)
    X = rng.standard_normal((4 * R, C), dtype=np.float32)
    Y = np.ones((R, C), np.float32)
    _, r = compile_run(tmp_path, accumulate, target, X=X, Y=Y.copy())
    np.testing.assert_allclose(r["Y"], Y + X.reshape(4, R, C).sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_a_read_modify_write_of_a_different_tile_each_item_stays_spatial(tmp_path, target):
    rng = np.random.default_rng(38)
    X, Y = (rng.standard_normal((4 * R, C), dtype=np.float32) for _ in range(2))
    pkg, r = compile_run(tmp_path, update_tiles, target, X=X, Y=Y.copy())
    np.testing.assert_allclose(r["Y"], Y + X, rtol=1e-6, atol=1e-6)
    if target == "aie-npu1":
        assert not _orchestrated(pkg, "update_tiles")


# A process loading one view twice in an iteration: its two streams of X through one mem tile were not a DMA
# pattern on aie-npu1 (aie.dma-pattern); the second load now reads the first's register.
@program
def two_loads(X: In[Tensor[3 * 16, C, f32]], Y: Out[Tensor[3 * 16, C, f32]]):
    ch = Channel[Tile[16, C, f32]](depth=1)

    @process(produces=[ch])
    def p():
        for i in range(3):
            send(ch, add(load(X.tile(i, 0, shape=(16, C))), muls(load(X.tile(i, 0, shape=(16, C))), 2.0)))

    @process(consumes=[ch])
    def c():
        for i in range(3):
            store(Y.tile(i, 0, shape=(16, C)), recv(ch))


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_loading_a_view_twice_in_an_iteration_runs(tmp_path, target):
    X = np.random.default_rng(385).standard_normal((3 * 16, C), dtype=np.float32)
    _, r = compile_run(tmp_path, two_loads, target, X=X)
    np.testing.assert_allclose(r["Y"], 3 * X, rtol=1e-6, atol=1e-6)


# Within one iteration, a load of part of the view just stored (or of a view overlapping it) cannot be read
# from the stored register, and an AIE core streams its loads ahead of its stores: aie-npu1 returned the old
# contents. It is now aie.csp-reload at the load, naming the store; Ascend runs it.
@program
def store_then_subview(X: In[Tensor[2 * R, C, f32]], Y: InOut[Tensor[R, C, f32]], Z: Out[Tensor[8, C, f32]]):
    ch = Channel[Tile[R, C, f32]](depth=1)

    @process(produces=[ch])
    def gen():
        for i in range(2):
            send(ch, load(X.tile(i, 0, shape=(R, C))))

    @process(consumes=[ch])
    def sink():
        for i in range(2):
            store(Y, recv(ch))
            store(Z.tile(i, 0, shape=(4, C)), load(Y[0:4, :]))


def test_a_load_of_part_of_the_view_just_stored_is_refused_on_aie(tmp_path):
    X = np.random.default_rng(1081).standard_normal((2 * R, C), dtype=np.float32)
    _, r = compile_run(tmp_path, store_then_subview, "pto-a2a3sim", X=X, Y=np.zeros((R, C), np.float32))
    np.testing.assert_array_equal(r["Z"], np.concatenate([X[0:4], X[R:R + 4]]))
    with pytest.raises(htp.CompileError, match=r"process 'sink' loads a view of 'Y' that its store earlier in the same "
                                               r"iteration wrote \(line \d+\).*\[aie.csp-reload\]"):
        htp.Context().compile(store_then_subview, "aie-npu1", tmp_path / "aie")


# The same for 1-D views: the check took a 1-D view's extent as 1 (its tile's rows), so a load of Y[16:48] after
# a store of Y[0:32] did not overlap it and aie-npu1 returned zeros. A load of a 1-D view the store did not
# write still runs on both targets.
@program
def store_then_shifted_1d(X: In[Tensor[64, f32]], Y: InOut[Tensor[64, f32]], Z: Out[Tensor[32, f32]],
                          W: Out[Tensor[32, f32]]):
    ch = Channel[Tensor[32, f32]](depth=1)

    @process(produces=[ch])
    def gen():
        send(ch, load(X[0:32]))

    @process(consumes=[ch])
    def sink():
        store(Y[0:32], recv(ch))
        store(W, load(Y[32:64]))
        store(Z, load(Y[16:48]))


@program
def store_then_other_1d(X: In[Tensor[64, f32]], Y: InOut[Tensor[64, f32]], W: Out[Tensor[32, f32]]):
    ch = Channel[Tensor[32, f32]](depth=1)

    @process(produces=[ch])
    def gen():
        send(ch, load(X[0:32]))

    @process(consumes=[ch])
    def sink():
        store(Y[0:32], recv(ch))
        store(W, load(Y[32:64]))


def test_a_load_overlapping_a_1d_view_just_stored_is_refused_on_aie(tmp_path):
    X = np.arange(64, dtype=np.float32)
    Y = np.arange(100, 164, dtype=np.float32)
    _, r = compile_run(tmp_path / "pto", store_then_shifted_1d, "pto-a2a3sim", X=X, Y=Y.copy())
    np.testing.assert_array_equal(r["Z"], np.concatenate([X[16:32], Y[32:48]]))
    with pytest.raises(htp.CompileError, match=r"process 'sink' loads a view of 'Y' that its store earlier in the same "
                                               r"iteration wrote \(line \d+\).*\[aie.csp-reload\]"):
        htp.Context().compile(store_then_shifted_1d, "aie-npu1", tmp_path / "aie")
    for target in TARGETS:
        _, r = compile_run(tmp_path / target, store_then_other_1d, target, X=X, Y=Y.copy())
        np.testing.assert_array_equal(r["W"], Y[32:64])


# Two stores of one view in an iteration (the second overwrites the first unread) were two transfers of the
# view, not a DMA pattern on aie-npu1 (aie.dma-pattern): the first is dropped.
from htp.dialects.tile import adds  # noqa: E402


@program
def two_stores(X: In[Tensor[3 * R, C, f32]], Y: InOut[Tensor[3 * R, C, f32]]):
    ch = Channel[Tile[R, C, f32]](depth=2)

    @process(produces=[ch])
    def gen():
        for i in range(3):
            send(ch, load(X.tile(i, 0, shape=(R, C))))

    @process(consumes=[ch])
    def sink():
        for i in range(3):
            t = recv(ch)
            store(Y.tile(i, 0, shape=(R, C)), muls(t, 2.0))
            store(Y.tile(i, 0, shape=(R, C)), adds(t, 1.0))


@pytest.mark.parametrize("target", TARGETS)
def test_a_view_stored_twice_in_an_iteration_keeps_the_last_store(tmp_path, target):
    X = np.random.default_rng(109).standard_normal((3 * R, C), dtype=np.float32)
    _, r = compile_run(tmp_path, two_stores, target, X=X, Y=np.zeros((3 * R, C), np.float32))
    np.testing.assert_allclose(r["Y"], X + 1, rtol=1e-6)


# The same within a loop whose trip count the program takes at run time (host-orchestrated on AIE, an
# iteration per task, whose task still loads before it stores).
@program
def store_then_subview_n(X: In[Tensor[4 * R, C, f32]], Y: InOut[Tensor[R, C, f32]], Z: Out[Tensor[16, C, f32]],
                         n: Scalar[i32]):
    ch = Channel[Tile[R, C, f32]](depth=1)

    @process(produces=[ch])
    def gen():
        for i in range(n):
            send(ch, load(X.tile(i, 0, shape=(R, C))))

    @process(consumes=[ch])
    def sink():
        for i in range(n):
            store(Y, recv(ch))
            store(Z.tile(i, 0, shape=(4, C)), load(Y[0:4, :]))


def test_a_load_of_part_of_the_view_just_stored_is_refused_under_a_runtime_loop(tmp_path):
    with pytest.raises(htp.CompileError, match=r"process 'sink' loads a view of 'Y'.*\[aie.csp-reload\]"):
        htp.Context().compile(store_then_subview_n, "aie-npu1", tmp_path / "aie")


@program
def dealt(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[128, 64, f32]], n: Scalar[i32]):
    work = Channel[Tile[16, 64, f32]](depth=2)
    done = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[work])
    def gen():
        for i in range(2 * n):
            send(work, load(X.tile(i, 0, shape=(16, 64))))

    def scale():                        # a replica's k-th item times k + 1
        for k in range(n):
            send(done, muls(recv(work), k + 1))

    worker = process("worker").consumes(work).produces(done).body(scale)
    replicate(worker, 2)

    @process(consumes=[done])
    def collect():
        for i in range(2 * n):
            store(Y.tile(i, 0, shape=(16, 64)), recv(done))


@pytest.mark.parametrize("target", TARGETS)
def test_replicas_share_a_channel_round_robin_when_host_orchestrated(tmp_path, target):
    # A runtime trip count makes aie-npu1 orchestrate the program from the host, each replica a stage run to its
    # end in turn; replica r still moves items r, r + 2, ... as docs/dialects/csp.md deals them (it took a block
    # of consecutive items, so item 1 was scaled by 2 instead of 1).
    x = np.random.default_rng(34).standard_normal((128, 64)).astype(np.float32)
    _, r = compile_run(tmp_path, dealt, target, X=x, n=4)
    factors = np.repeat(np.array([1, 1, 2, 2, 3, 3, 4, 4], np.float32), 16)[:, None]
    np.testing.assert_array_equal(np.asarray(r["Y"]), x * factors)


# Stores under an `if` in a process: a collector storing its total one way or another after its loop, and a
# storer keeping only some items. aie-npu1 refused both (aie.csp-shape: "it moves data inside a nested loop or
# condition"); the host-orchestrated task now evaluates the condition, its conditionally stored view gathered
# first so an untaken store leaves the tensor as it was.
@program
def store_either_way(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[16, 64, f32]], mode: Scalar[i32]):
    loaded = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[loaded])
    def loader():
        for i in range(8):
            send(loaded, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[loaded])
    def collector():
        acc = load(X.tile(0, 0, shape=(16, 64)))
        for i in range(8):
            acc = add(acc, recv(loaded))
        if mode == 1:
            store(Y, acc)
        else:
            store(Y, muls(acc, 10.0))


@program
def keep_some(X: In[Tensor[128, 64, f32]], Y: InOut[Tensor[128, 64, f32]], keep: Scalar[i32]):
    items = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[items])
    def source():
        for i in range(8):
            send(items, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[items])
    def sink():
        for i in range(8):
            t = recv(items)
            if i % keep == 0:
                store(Y.tile(i, 0, shape=(16, 64)), muls(t, 2.0))


@pytest.mark.parametrize("target", TARGETS)
def test_stores_under_a_condition_run_on_both_targets(tmp_path, target):
    x = np.random.default_rng(21).standard_normal((128, 64)).astype(np.float32)
    total = x[:16] + x.reshape(8, 16, 64).sum(0)
    ctx = htp.Context()
    bound = htp.bind(ctx.compile(store_either_way, target, tmp_path / "either"), ctx)
    np.testing.assert_allclose(bound.run(X=x, mode=1)["Y"], total, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bound.run(X=x, mode=0)["Y"], 10 * total, rtol=1e-5, atol=1e-4)
    y = np.full((128, 64), -1.0, np.float32)
    r = htp.bind(ctx.compile(keep_some, target, tmp_path / "some"), ctx).run(X=x, Y=y.copy(), keep=3)
    want = y.copy()
    for i in range(0, 8, 3):
        want[16 * i:16 * i + 16] = 2 * x[16 * i:16 * i + 16]
    np.testing.assert_array_equal(r["Y"], want)


# A process reading back, in the same iteration, the view it stored under a condition: aie-npu1's task read the
# view from an input object gathered before the task, so it saw the tensor as it was before the store (Z was
# [-7, 1, 20, 3] for [1, 20, 3, 40]). The load now reads the stored view's object (gathered first, inout).
@program
def store_then_read_back(X: In[Tensor[64, 64, f32]], Y: InOut[Tensor[16, 64, f32]], Z: Out[Tensor[64, 64, f32]]):
    items = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[items])
    def source():
        for i in range(4):
            send(items, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[items])
    def sink():
        for i in range(4):
            t = recv(items)
            if i % 2 == 0:
                store(Y.tile(0, 0, shape=(16, 64)), t)
            else:
                store(Y.tile(0, 0, shape=(16, 64)), muls(t, 10.0))
            store(Z.tile(i, 0, shape=(16, 64)), load(Y.tile(0, 0, shape=(16, 64))))


@program
def store_some_then_read_back(X: In[Tensor[64, 64, f32]], Y: InOut[Tensor[16, 64, f32]], Z: Out[Tensor[64, 64, f32]]):
    items = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[items])
    def source():
        for i in range(4):
            send(items, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[items])
    def sink():
        for i in range(4):
            t = recv(items)
            if i % 2 == 0:
                store(Y.tile(0, 0, shape=(16, 64)), t)
            store(Z.tile(i, 0, shape=(16, 64)), load(Y.tile(0, 0, shape=(16, 64))))


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_reads_back_what_it_stored_under_a_condition(tmp_path, target):
    x = np.repeat(np.arange(1, 5, dtype=np.float32), 16)[:, None] * np.ones((1, 64), np.float32)  # item i is i + 1
    y = np.full((16, 64), -7.0, np.float32)
    ctx = htp.Context()
    for fn, want in ((store_then_read_back, [1, 20, 3, 40]), (store_some_then_read_back, [1, 1, 3, 3])):
        r = htp.bind(ctx.compile(fn, target, tmp_path / fn.__name__), ctx).run(X=x, Y=y.copy())
        np.testing.assert_array_equal(np.asarray(r["Z"]).reshape(4, 16, 64)[:, 0, 0], want, err_msg=fn.__name__)
        np.testing.assert_array_equal(r["Y"], np.full((16, 64), want[-1] if fn is store_then_read_back else 3, np.float32))


# Two processes storing the same tile, ordered by their channel (the first stores an item and sends it, the
# second stores three times it): aie-npu1 refused it as an output "written identically by the cores" (neither
# true nor what the host orchestration can run); it runs host-orchestrated, stage by stage in producer order.
@program
def two_writers(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[16, 64, f32]]):
    items = Channel[Tile[16, 64, f32]](depth=1)

    @process(produces=[items])
    def first():
        for i in range(4):
            t = load(X.tile(i, 0, shape=(16, 64)))
            store(Y.tile(0, 0, shape=(16, 64)), t)
            send(items, t)

    @process(consumes=[items])
    def second():
        for i in range(4):
            store(Y.tile(0, 0, shape=(16, 64)), muls(recv(items), 3.0))


@pytest.mark.parametrize("target", TARGETS)
def test_two_processes_storing_one_tile_in_channel_order_run(tmp_path, target):
    x = np.random.default_rng(22).standard_normal((64, 64)).astype(np.float32)
    ctx = htp.Context()
    pkg = ctx.compile(two_writers, target, tmp_path / "p")
    np.testing.assert_array_equal(htp.bind(pkg, ctx).run(X=x)["Y"], 3 * x[48:])
    if target == "aie-npu1":
        notes = [d["message"] for d in pkg.diagnostics if d["code"] == "aie.orchestrated"]
        assert any("output 'Y' is written at the same elements by the cores of first and second" in n for n in notes), notes


# A handshake: process a stores Y's tile and sends it, b stores twice it there and acknowledges, a then loads
# the tile. aie-npu1 refuses it (its loads run ahead of its stores, and the program's channels form a cycle the
# host does not orchestrate), but the reason advised "load exactly the view stored", which the program does.
@program
def handshake(X: In[Tensor[64, 64, f32]], Y: InOut[Tensor[64, 64, f32]], Z: Out[Tensor[64, 64, f32]]):
    fwd = Channel[Tile[16, 64, f32]](depth=1)
    ack = Channel[Tile[16, 64, f32]](depth=1)

    @process(produces=[fwd], consumes=[ack])
    def a():
        for i in range(4):
            t = load(X.tile(i, 0, shape=(16, 64)))
            store(Y.tile(i, 0, shape=(16, 64)), t)
            send(fwd, t)
            k = recv(ack)
            store(Z.tile(i, 0, shape=(16, 64)), add(load(Y.tile(i, 0, shape=(16, 64))), muls(k, 0.0)))

    @process(consumes=[fwd], produces=[ack])
    def b():
        for i in range(4):
            t = recv(fwd)
            store(Y.tile(i, 0, shape=(16, 64)), muls(t, 2.0))
            send(ack, t)


@pytest.mark.parametrize("target", TARGETS)
def test_a_handshake_through_a_tile_says_why_aie_refuses_it(tmp_path, target):
    x = np.random.default_rng(23).standard_normal((64, 64)).astype(np.float32)
    ctx = htp.Context()
    if target == "pto-a2a3sim":
        r = htp.bind(ctx.compile(handshake, target, tmp_path / "p"), ctx).run(X=x, Y=np.zeros_like(x))
        np.testing.assert_array_equal(r["Z"], 2 * x)
        return
    with pytest.raises(htp.CompileError) as e:
        ctx.compile(handshake, target, tmp_path / "p")
    text = str(e.value)
    assert ("process 'a' loads the view of 'Y' that its store earlier in the same iteration wrote" in text and
            "another process may write the view between the two (a channel operation lies between them)" in text and
            "load exactly the view stored" not in text), text


@program
def store_two_views(X: In[Tensor[64, 64, f32]], Y: InOut[Tensor[32, 64, f32]], flag: Scalar[i32]):
    items = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[items])
    def source():
        for i in range(4):
            send(items, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[items])
    def sink():
        for i in range(2):
            t = recv(items)
            u = recv(items)
            store(Y.tile(0, 0, shape=(16, 64)), t)
            m = 0
            if flag == 1:
                m = i + 1
            if m == 2:
                store(Y.tile(1, 0, shape=(16, 64)), u)


@program
def store_two_views_by_flag(X: In[Tensor[64, 64, f32]], Y: InOut[Tensor[32, 64, f32]], flag: Scalar[i32]):
    items = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[items])
    def source():
        for i in range(4):
            send(items, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[items])
    def sink():
        for i in range(2):
            t = recv(items)
            u = recv(items)
            store(Y.tile(0, 0, shape=(16, 64)), t)
            if flag == 1:
                store(Y.tile(1, 0, shape=(16, 64)), u)


def test_a_condition_storing_beside_another_view_of_the_tensor_says_why_on_aie(tmp_path):
    # The task decides a condition of a register set under another condition (m): an untaken store would
    # write its view's old contents back over the other store's.
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(store_two_views, "aie-npu1", tmp_path / "p")
    assert "stores a view of 'Y' under a condition and another view of it" in str(e.value)
    # A condition of the program's scalar is the host's: each branch is a kernel of its own, storing what it
    # stores (pto-a2a3sim refuses the two receives per iteration, pto.csp).
    x = np.random.default_rng(35).standard_normal((64, 64)).astype(np.float32)
    ctx = htp.Context()
    bound = htp.bind(ctx.compile(store_two_views_by_flag, "aie-npu1", tmp_path / "flag"), ctx)
    for flag in (0, 1):
        want = np.full((32, 64), -1.0, np.float32)
        want[:16] = x[32:48]
        if flag:
            want[16:] = x[48:64]
        r = bound.run(X=x, Y=np.full((32, 64), -1.0, np.float32), flag=flag)
        np.testing.assert_array_equal(r["Y"], want, err_msg=f"flag={flag}")


# A process reading the tile it stored in the previous iteration, under `if i == 0: ... else:` (a running
# sum), as tile.md section 2 allows: aie-npu1's task took the view of the else branch in every iteration and
# failed at run time ("covers [-8, 0)") where i == 0 does not read it. A process sending once in each branch
# of an `if` was aie.csp-shape ("it sends or receives inside a condition"). A condition of the loop variable,
# constants and the program's scalars is now decided by the host: each branch is an iteration kernel of its
# own (aie.md section 2).
@program
def running_sum(X: In[Tensor[32, 16, f32]], Y: InOut[Tensor[32, 16, f32]]):
    a = Channel[Tile[8, 16, f32]](depth=1)

    @process(produces=[a])
    def producer():
        for i in range(4):
            send(a, load(X.tile(i, 0, shape=(8, 16))))

    @process(consumes=[a])
    def summer():
        for i in range(4):
            t = recv(a)
            if i == 0:
                store(Y.tile(i, 0, shape=(8, 16)), t)
            else:
                store(Y.tile(i, 0, shape=(8, 16)), add(t, load(Y.tile(i - 1, 0, shape=(8, 16)))))


@program
def send_either_branch(X: In[Tensor[32, 16, f32]], Y: Out[Tensor[32, 16, f32]], scale: Scalar[f32]):
    a = Channel[Tile[8, 16, f32]](depth=1)

    @process(produces=[a])
    def producer():
        for i in range(4):
            t = load(X.tile(i, 0, shape=(8, 16)))
            if i % 2 == 0:
                send(a, t)
            else:
                send(a, muls(t, scale))

    @process(consumes=[a])
    def storer():
        for i in range(4):
            store(Y.tile(i, 0, shape=(8, 16)), recv(a))


@program
def keep_some_by_register(X: In[Tensor[128, 64, f32]], Y: InOut[Tensor[128, 64, f32]], keep: Scalar[i32]):
    items = Channel[Tile[16, 64, f32]](depth=2)

    @process(produces=[items])
    def source():
        for i in range(8):
            send(items, load(X.tile(i, 0, shape=(16, 64))))

    @process(consumes=[items])
    def sink():
        for i in range(8):
            t = recv(items)
            m = 1
            if keep > 0:
                m = i % keep
            if m == 0:
                store(Y.tile(i, 0, shape=(16, 64)), muls(t, 2.0))


@pytest.mark.parametrize("target", TARGETS)
def test_branches_the_host_decides_run_on_both_targets(tmp_path, target):
    ctx = htp.Context()
    x = (np.arange(32 * 16, dtype=np.float32).reshape(32, 16) % 7) / 4
    r = htp.bind(ctx.compile(running_sum, target, tmp_path / "sum"), ctx).run(X=x, Y=np.zeros((32, 16), np.float32))
    np.testing.assert_allclose(r["Y"], np.cumsum(x.reshape(4, 8, 16), axis=0).reshape(32, 16), rtol=1e-6)
    r = htp.bind(ctx.compile(send_either_branch, target, tmp_path / "send"), ctx).run(X=x, scale=-3.0)
    want = x.copy()
    want[8:16] *= -3
    want[24:32] *= -3
    np.testing.assert_array_equal(r["Y"], want)
    # A condition of a register set under another condition stays the task's (its kernel evaluates it).
    x = np.random.default_rng(36).standard_normal((128, 64)).astype(np.float32)
    y = np.full((128, 64), -1.0, np.float32)
    r = htp.bind(ctx.compile(keep_some_by_register, target, tmp_path / "some"), ctx).run(X=x, Y=y.copy(), keep=3)
    want = y.copy()
    for i in range(0, 8, 3):
        want[16 * i:16 * i + 16] = 2 * x[16 * i:16 * i + 16]
    np.testing.assert_array_equal(r["Y"], want)


# A link whose single end is a replicated process: aie-npu1 refuses it (aie.md section 2, links), but said
# "must have one process at its other end, not replicated (it has 1)" and no way out.
@program
def forward_from_replicas(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    a = Channel[Tile[8, 32, f32]](depth=2)
    b = Channel[Tile[8, 32, f32]](depth=2)
    c = Channel[Tile[8, 32, f32]](depth=2)

    @process(produces=[a])
    def src():
        for i in range(8):
            send(a, load(X.tile(i, 0, shape=(8, 32))))

    @process(consumes=[a], produces=[b])
    def mid():
        for t in consume(a):
            send(b, adds(t, 1.0))

    @process(consumes=[c])
    def sink():
        for i in range(8):
            store(Y.tile(i, 0, shape=(8, 32)), recv(c))

    connect([b], [c])
    replicate(mid, 2)


def test_a_link_to_a_replicated_process_names_it_and_a_way_out_on_aie(tmp_path):
    x = np.random.default_rng(5).standard_normal((64, 32)).astype(np.float32)
    _, r = compile_run(tmp_path, forward_from_replicas, "pto-a2a3sim", X=x)
    np.testing.assert_allclose(r["Y"], x + 1, rtol=1e-6)
    with pytest.raises(htp.CompileError) as e:
        htp.Context().compile(forward_from_replicas, "aie-npu1", tmp_path / "aie")
    assert ("channel 'b' is served at its other end by process 'mid', replicated 2 times" in str(e.value)
            and "drop the link and let the replicas share channel 'b'" in str(e.value)), str(e.value)


# A decode step's KV-cache append in a megakernel: one process stores the new key at a position known only at
# run time (KT[:, pos:pos + 1]) and signals another, which scores the queries against the whole cache. aie-npu1
# refused it (aie.dynamic-view: "the offset of its store of 'KT' must be static"); the host orchestrates it now.
@program
def kv_append(Kn: In[Tensor[1, 32, f32]], KT: InOut[Tensor[32, 64, f32]], Q: In[Tensor[8, 32, f32]],
              S: Out[Tensor[8, 64, f32]], pos: Scalar[i32]):
    appended = Channel[Tile[32, 1, f32]](depth=1)

    @process(produces=[appended])
    def writer():
        for _ in range(1):
            k = transpose(load(Kn))
            store(KT[:, pos:pos + 1], k)
            send(appended, k)

    @process(consumes=[appended])
    def scorer():
        for _ in range(1):
            recv(appended)
            store(S, matmul(load(Q), load(KT)))


@pytest.mark.parametrize("target", TARGETS)
def test_a_process_appending_to_a_cache_at_a_runtime_position(tmp_path, target):
    ctx = htp.Context()
    rng = np.random.default_rng(41)
    kn, q = rng.standard_normal((1, 32), dtype=np.float32), rng.standard_normal((8, 32), dtype=np.float32)
    run = htp.bind(ctx.compile(kv_append, target, tmp_path / "kv"), ctx)
    for pos in (37, 0, 63):
        kt = rng.standard_normal((32, 64), dtype=np.float32)
        want = kt.copy()
        want[:, pos] = kn[0]
        r = run.run(Kn=kn, KT=kt, Q=q, pos=pos)
        np.testing.assert_array_equal(r["KT"], want)
        np.testing.assert_allclose(r["S"], q @ want, rtol=1e-4, atol=1e-4)


# One In tensor read through two views per iteration (a base tile loaded before the loop beside the loop's
# tiles, or both loads in the loop): aie-npu1 refused both with aie.dma-pattern ("the transfer of 'X' through
# @in_X_L2 is not a 4-D DMA access pattern"); such a program runs host-orchestrated now (probe round 21).
@program
def plus_base(X: In[Tensor[32, 64, f32]], Y: Out[Tensor[32, 64, f32]]):
    c = Channel[Tile[16, 64, f32]](depth=1)

    @process(produces=[c])
    def producer():
        base = load(X.tile(0, 0, shape=(16, 64)))
        for i in range(2):
            send(c, add(load(X.tile(i, 0, shape=(16, 64))), base))

    @process(consumes=[c])
    def collector():
        for i in range(2):
            store(Y.tile(i, 0, shape=(16, 64)), recv(c))


@program
def plus_base_in_loop(X: In[Tensor[32, 64, f32]], Y: Out[Tensor[32, 64, f32]]):
    c = Channel[Tile[16, 64, f32]](depth=1)

    @process(produces=[c])
    def producer():
        for i in range(2):
            send(c, add(load(X.tile(i, 0, shape=(16, 64))), load(X.tile(0, 0, shape=(16, 64)))))

    @process(consumes=[c])
    def collector():
        for i in range(2):
            store(Y.tile(i, 0, shape=(16, 64)), recv(c))


@pytest.mark.parametrize("target", TARGETS)
def test_one_input_read_through_two_views_per_iteration(tmp_path, target):
    x = np.random.default_rng(53).standard_normal((32, 64)).astype(np.float32)
    want = x + np.concatenate([x[:16], x[:16]])
    for fn in (plus_base, plus_base_in_loop):
        _, r = compile_run(tmp_path / fn.__name__, fn, target, X=x)
        np.testing.assert_array_equal(np.asarray(r["Y"]), want)



# A runtime scalar a process reads in every iteration reaches its core once per iteration: aie-npu1 gave each
# transfer a buffer descriptor of its own on the shim, so 15 iterations beside the input and the output passed
# the shim's 16 ("the runtime sequence needs more than 16 buffer descriptors", aie.route), where pto-a2a3sim ran
# it and a constant ran at any count. The transfers are now one descriptor repeating the scalar (repeat count up
# to 64), a few for more.
def _scaled_copy(n):
    @program
    def scaled_copy(X: In[Tensor[n * 16, 64, f32]], Y: Out[Tensor[n * 16, 64, f32]], s: float):
        a = Channel[Tile[16, 64, f32]](depth=2)

        @process(produces=[a])
        def src():
            for i in range(n):
                send(a, muls(load(X.tile(i, 0, shape=(16, 64))), s))

        @process(consumes=[a])
        def sink():
            for i in range(n):
                store(Y.tile(i, 0, shape=(16, 64)), recv(a))
    return scaled_copy


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [16, 200])
def test_a_runtime_scalar_read_in_every_iteration_of_a_long_loop(tmp_path, target, n):
    x = np.random.default_rng(n).standard_normal((n * 16, 64)).astype(np.float32)
    pkg, r = compile_run(tmp_path, _scaled_copy(n), target, X=x, s=2.5)
    np.testing.assert_array_equal(np.asarray(r["Y"]), x * np.float32(2.5))
    if target == "aie-npu1":
        mlir = next((pkg.path / "codegen/aie").rglob("aie.mlir")).read_text()
        repeats = [int(line.split("][")[1].split(",")[0]) for line in mlir.splitlines() if "@in_s}" in line]
        assert sum(repeats) == n and len(repeats) == -(-n // 64), repeats


# A tile register crossing a cut of an iteration into steps: the pair of items received one after the other and
# added (a reduction of two items per iteration), and a tile loaded before a send and used after the reply
# (a ping-pong). pto-a2a3sim refused both ("uses register 'u' in two of them; tasks hand over no registers",
# pto.csp); aie-npu1 ran the pair and refused the ping-pong ("the two sides are separate kernel calls, which hand
# over no registers", aie.csp-shape). The register now travels from step to step through a tensor of its own on
# pto and a buffer in the core's memory on aie.
@program
def pairs(X: In[Tensor[128, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    c = Channel[Tile[16, 32, f32]](depth=2)

    @process(produces=[c])
    def p():
        for i in range(4):
            send(c, load(X.tile(2 * i, 0, shape=(16, 32))))
            send(c, muls(load(X.tile(2 * i + 1, 0, shape=(16, 32))), 3.0))

    @process(consumes=[c])
    def q():
        for i in range(4):
            u = recv(c)
            v = recv(c)
            store(Y.tile(i, 0, shape=(16, 32)), add(u, v))


@program
def ping_pong(X: In[Tensor[64, 32, f32]], Y: Out[Tensor[64, 32, f32]]):
    ask = Channel[Tile[16, 32, f32]](depth=1)
    answer = Channel[Tile[16, 32, f32]](depth=1)

    @process(produces=[ask], consumes=[answer])
    def client():
        for i in range(4):
            a = load(X.tile(i, 0, shape=(16, 32)))
            send(ask, muls(a, 2.0))
            store(Y.tile(i, 0, shape=(16, 32)), add(a, recv(answer)))

    @process(consumes=[ask], produces=[answer])
    def server():
        for i in range(4):
            send(answer, adds(recv(ask), 1.0))


@pytest.mark.parametrize("target", TARGETS)
def test_a_tile_crossing_the_steps_of_an_iteration(tmp_path, target):
    x = np.random.default_rng(40).standard_normal((128, 32)).astype(np.float32)
    _, r = compile_run(tmp_path / "pairs", pairs, target, X=x)
    blocks = x.reshape(8, 16, 32)
    np.testing.assert_allclose(np.asarray(r["Y"]), (blocks[0::2] + 3 * blocks[1::2]).reshape(64, 32), rtol=1e-6)
    _, r = compile_run(tmp_path / "ping", ping_pong, target, X=x[:64])
    np.testing.assert_allclose(np.asarray(r["Y"]), x[:64] + (2 * x[:64] + 1), rtol=1e-6)
