"""Host-orchestrated workloads on aie-npu1 (docs/backends/aie.md §2): programs the spatial mapping does not
take — several launches, a grid larger than the device, ragged and CSR domains, views read from tensors, a
pipe over channels — compile into one single-core design per kernel plus orchestration.json, run on aie-sim
one task at a time, agree with pto-a2a3sim and NumPy, and refuse bad runtime data naming the construct."""
import json
import os
import pathlib
import sys
import textwrap

import numpy as np
import pytest

import htp

# The cells of docs/parity.md these tests establish (scripts/parity_table.py).
PARITY = {
    "test_a_grid_larger_than_the_device_runs_one_task_at_a_time": [
        ("grid larger than the device", "pto-a2a3sim"), ("grid larger than the device", "aie-npu1")],
    "test_runtime_views_ragged_rows_and_scalars_agree_with_pto_and_numpy": [
        (c, t) for c in ("ragged domain (`Ragged`)", "runtime scalar of a workload",
                         "view offset read from a tensor (block table)") for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_view_that_drops_a_middle_dimension_reads_strided_rows": [
        ("view dropping a middle dimension", "pto-a2a3sim"), ("view dropping a middle dimension", "aie-npu1")],
    "test_a_kernel_with_more_inputs_than_a_core_has_dma_channels_is_multiplexed": [
        (c, t) for c in ("kernel with three inputs", "column broadcast (`colexpand_*`)")
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_kernel_entries_with_more_inputs_than_dma_channels_are_multiplexed": [
        (c, t) for c in ("kernel entry with runtime scalars", "kernel entry with three inputs")
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_kernel_entry_mixing_cube_and_vector_work_is_split_on_ascend": [
        ("kernel entry mixing cube and vector work", "pto-a2a3sim"),
        ("kernel entry mixing cube and vector work", "aie-npu1")],
    "test_a_step_reading_what_an_earlier_step_wrote_runs_in_order": [
        ("`P.seq` step reading what the step before wrote", "pto-a2a3sim"),
        ("`P.seq` step reading what the step before wrote", "aie-npu1")],
    "test_an_inout_accumulation_over_launches_runs_on_both_targets": [
        ("InOut accumulation over launches", "pto-a2a3sim"), ("InOut accumulation over launches", "aie-npu1")],
    "test_a_dimension_bound_at_run_time_runs_on_both_targets": [
        ("tensor dimension bound at run time", "pto-a2a3sim"), ("tensor dimension bound at run time", "aie-npu1")],
    "test_a_csp_program_reads_its_runtime_scalar_on_both_targets": [
        ("runtime scalar of a CSP program", "pto-a2a3sim"), ("runtime scalar of a CSP program", "aie-npu1")],
    "test_replicated_csp_workers_with_their_own_trip_counts_run_on_both_targets": [
        (c, t) for c in ("CSP replicated process (`replicate`)", "CSP processes with different trip counts")
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_csp_links_distribute_and_join_round_robin_on_both_targets": [
        ("CSP links (`connect`: distribute, join, forward)", "pto-a2a3sim"),
        ("CSP links (`connect`: distribute, join, forward)", "aie-npu1")],
    "test_a_round_trip_within_one_iteration_runs_in_steps_on_both_targets": [
        (c, t) for c in ("CSP `Event` (rendezvous)", "CSP round trip within one iteration")
        for t in ("pto-a2a3sim", "aie-npu1")],
    "test_single_head_attention_written_once_runs_on_both_targets": [
        (c, t) for c in ("several launches with intermediates", "`transpose`") for t in ("pto-a2a3sim", "aie-npu1")],
    "test_a_pipe_over_channels_streams_its_stages_in_order": [("`P.pipe` over channels", "aie-npu1")],
    "test_timing_batched_issues_ready_tasks_in_batches": [
        ("schedule `timing(batched)`", "pto-a2a3sim"), ("schedule `timing(batched)`", "aie-npu1")],
    "test_a_kernel_mixing_cube_and_vector_work_is_split_on_ascend": [
        ("kernel mixing cube and vector work", "pto-a2a3sim"), ("kernel mixing cube and vector work", "aie-npu1")],
}

EXAMPLES = pathlib.Path(os.environ.get("HTP_EXAMPLES", pathlib.Path(__file__).resolve().parents[2] / "examples"))
sys.path.insert(0, str(EXAMPLES))

PROGRAM_NAME = "orchestrated_program"  # the program and ctx fixtures: conftest.py
PROGRAM = textwrap.dedent('''
    from htp.dialects.tile import (kernel, Tensor, Tile, Scalar, In, Out, InOut, f32, i32, load, store, add, mul, muls, adds, exp,
                                   rowsum, rowmax, rsqrt, rowexpand_sub, rowexpand_mul, rowexpand_div, colexpand_mul,
                                   colexpand_add, matmul, transpose, relu)
    from htp.dialects.wsp import workload, schedule, timing, batched, P, Ragged, DenseDyn
    from htp.dialects.csp import Channel, Event, connect, consume, process, program, recv, replicate, send

    ROWS = 32            # grid points: more than the 16 cores of npu1


    @kernel
    def scale(x: In[Tensor[1, 64, f32]], y: Out[Tensor[1, 64, f32]]):
        store(y, muls(load(x), 2.0))


    @kernel
    def bump(y: InOut[Tensor[1, 64, f32]], s: Scalar[f32]):
        store(y, add(load(y), s))


    @workload
    def big_grid(X: In[Tensor[ROWS, 64, f32]], Y: Out[Tensor[ROWS, 64, f32]]):
        for i in P(ROWS):
            scale[i](X[i:i + 1, :], Y[i:i + 1, :])


    @workload
    def gathered(X: In[Tensor[ROWS, 64, f32]], idx: In[Tensor[8, i32]], lens: In[Tensor[8, i32]],
                 Y: Out[Tensor[8, 64, f32]], s: float):
        for b in P(8):
            scale[b](X[idx[b]:idx[b] + 1, :], Y[b:b + 1, :])          # a row chosen at run time
        for b, j in P(Ragged(8, lens)):
            bump[b, j](Y[b:b + 1, :], s)                               # Y[b] += s, lens[b] times


    @kernel
    def add_rows(a: In[Tensor[4, 64, f32]], b: In[Tensor[4, 64, f32]], c: Out[Tensor[4, 64, f32]]):
        store(c, add(load(a), load(b)))


    @workload
    def middle(X: In[Tensor[4, 3, 64, f32]], Y: In[Tensor[3, 4, 64, f32]], Z: Out[Tensor[3, 4, 64, f32]]):
        for i in P(3):                                                 # X[:, i, :]: strided rows
            add_rows[i](X[:, i, :], Y[i, :, :], Z[i, :, :])


    @kernel
    def layernorm_rows(x: In[Tensor[16, 128, f32]], gamma: In[Tensor[1, 128, f32]], beta: In[Tensor[1, 128, f32]],
                       y: Out[Tensor[16, 128, f32]]):
        t = load(x)
        c = rowexpand_sub(t, muls(rowsum(t), 1.0 / 128))
        inv = rsqrt(adds(muls(rowsum(mul(c, c)), 1.0 / 128), 1e-5))
        store(y, colexpand_add(colexpand_mul(rowexpand_mul(c, inv), load(gamma)), load(beta)))


    @workload
    def layernorm(X: In[Tensor[64, 128, f32]], gamma: In[Tensor[1, 128, f32]], beta: In[Tensor[1, 128, f32]],
                  Y: Out[Tensor[64, 128, f32]]):
        for i in P(4):
            layernorm_rows[i](X.tile(i, 0), gamma, beta, Y.tile(i, 0))


    @kernel
    def transpose_rows(k: In[Tensor[32, 64, f32]], kt: Out[Tensor[64, 32, f32]]):
        store(kt, transpose(load(k)))


    @kernel
    def scores(q: In[Tensor[16, 64, f32]], kt: In[Tensor[64, 64, f32]], s: Out[Tensor[16, 64, f32]]):
        store(s, matmul(load(q), load(kt)))


    @kernel
    def softmax_rows(s: In[Tensor[16, 64, f32]], p: Out[Tensor[16, 64, f32]]):
        t = muls(load(s), 0.125)
        e = exp(rowexpand_sub(t, rowmax(t)))
        store(p, rowexpand_div(e, rowsum(e)))


    @kernel
    def weigh(p: In[Tensor[16, 64, f32]], v: In[Tensor[64, 64, f32]], o: Out[Tensor[16, 64, f32]]):
        store(o, matmul(load(p), load(v)))


    @workload
    def attention(Q: In[Tensor[64, 64, f32]], K: In[Tensor[64, 64, f32]], V: In[Tensor[64, 64, f32]],
                  O: Out[Tensor[64, 64, f32]]):
        KT: Tensor[64, 64, f32]
        S: Tensor[64, 64, f32]
        Pr: Tensor[64, 64, f32]
        for j in P(2):
            transpose_rows[j](K.tile(j, 0), KT.tile(0, j))
        for i in P(4):                                                 # rows of queries
            scores[i](Q.tile(i, 0), KT, S.tile(i, 0))
            softmax_rows[i](S.tile(i, 0), Pr.tile(i, 0))
            weigh[i](Pr.tile(i, 0), V, O.tile(i, 0))


    @kernel
    def attn_rows(q: In[Tensor[16, 32, f32]], kt: In[Tensor[32, 32, f32]], v: In[Tensor[32, 32, f32]],
                  o: Out[Tensor[16, 32, f32]]):
        s = matmul(load(q), load(kt))                                  # cube work ...
        t = muls(s, 0.125)                                             # ... vector work ...
        e = exp(rowexpand_sub(t, rowmax(t)))
        store(o, matmul(rowexpand_div(e, rowsum(e)), load(v)))         # ... and cube work again


    @workload
    def fused_attention(Q: In[Tensor[64, 32, f32]], KT: In[Tensor[32, 32, f32]], V: In[Tensor[32, 32, f32]],
                        O: Out[Tensor[64, 32, f32]]):
        for i in P(4):
            attn_rows[i](Q.tile(i, 0), KT, V, O.tile(i, 0))


    @workload
    def fused_ragged(Q: In[Tensor[64, 32, f32]], KT: In[Tensor[32, 32, f32]], V: In[Tensor[32, 32, f32]],
                     lens: In[Tensor[4, i32]], O: Out[Tensor[64, 32, f32]]):
        for b, j in P(Ragged(4, lens)):
            attn_rows[b, j](Q.tile(b, 0), KT, V, O.tile(b, 0))


    @kernel
    def mixed_loop(a: In[Tensor[16, 32, f32]], b: In[Tensor[32, 32, f32]], c: Out[Tensor[16, 32, f32]]):
        acc = load(a)
        for k in range(2):
            acc = muls(matmul(acc, load(b)), 0.5)                      # cube and vector in one loop body
        store(c, acc)


    @workload
    def loop_mix(A: In[Tensor[16, 32, f32]], B: In[Tensor[32, 32, f32]], C: Out[Tensor[16, 32, f32]]):
        for i in P(1):
            mixed_loop[i](A, B, C)


    @workload
    def batched_vadd(X: In[Tensor[ROWS, 64, f32]], Y: Out[Tensor[ROWS, 64, f32]]):
        for i in P(16):
            scale[i](X[i:i + 1, :], Y[i:i + 1, :])


    @schedule(batched_vadd)
    def batched_schedule():
        timing(batched(4))


    @workload
    def piped(X: In[Tensor[ROWS, 64, f32]], Y: Out[Tensor[ROWS, 64, f32]]):
        rows = Channel[Tensor[1, 64, f32]](depth=2)
        with P.pipe():
            for i in P.seq(ROWS):
                send(rows, scale[i](X[i:i + 1, :]))
            for i in P.seq(ROWS):
                scale[i](recv(rows), Y[i:i + 1, :])


    @kernel
    def affine(x: In[Tensor[32, 64, f32]], a: Scalar[f32], y: Out[Tensor[32, 64, f32]], b: Scalar[f32]):
        store(y, adds(muls(load(x), a), b))                            # a kernel entry, two runtime scalars


    @kernel
    def scores_t(q: In[Tensor[32, 64, f32]], k: In[Tensor[32, 64, f32]], s: Out[Tensor[32, 32, f32]]):
        store(s, matmul(load(q), transpose(load(k))))                  # a kernel entry: cube and vector work


    @kernel
    def cube_vector_cube(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], c: Out[Tensor[32, 32, f32]]):
        w = load(b)
        p = matmul(load(a), w)
        p = exp(p)                                                     # p handed in, redefined, handed on
        store(c, matmul(p, w))


    @kernel
    def mm_acc(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], c: InOut[Tensor[32, 32, f32]]):
        store(c, add(load(c), matmul(load(a), load(b))))


    @kernel
    def mm_loaded_acc(a: In[Tensor[32, 32, f32]], b: In[Tensor[32, 32, f32]], c: InOut[Tensor[32, 32, f32]]):
        acc = load(c)                                                  # an accumulator started from memory
        acc = matmul(load(a), load(b), acc)
        store(c, acc)


    @kernel
    def scale16(x: In[Tensor[16, 64, f32]], y: Out[Tensor[16, 64, f32]], s: Scalar[f32]):
        store(y, muls(load(x), s))


    @workload
    def scale_batch(X: In[Tensor["B", 64, f32]], Y: Out[Tensor["B", 64, f32]], s: float):
        for i in P(DenseDyn(X.shape[0] // 16)):                        # B is bound by the arguments at run time
            scale16[i](X[i * 16:(i + 1) * 16, :], Y[i * 16:(i + 1) * 16, :], s)


    @program
    def scaled_pipe(X: In[Tensor[128, 64, f32]], Y: Out[Tensor[128, 64, f32]], s: Scalar[f32]):
        a = Channel[Tile[32, 64, f32]](depth=2)

        @process(produces=[a])
        def prod():
            for i in range(4):
                send(a, muls(load(X.tile(i, 0, shape=(32, 64))), s))   # the program's runtime scalar

        @process(consumes=[a])
        def cons():
            for i in range(4):
                store(Y.tile(i, 0, shape=(32, 64)), recv(a))


    @program
    def fanout(X: In[Tensor[256, 64, f32]], Y: Out[Tensor[256, 64, f32]]):
        work = Channel[Tile[16, 64, f32]](depth=1)
        done = Channel[Tile[16, 64, f32]](depth=1)

        def generate():
            for i in range(16):
                send(work, load(X.tile(i, 0, shape=(16, 64))))

        def work_on():                                                 # 2 replicas, 8 items each
            for k in range(8):
                send(done, relu(recv(work)))

        def collect():
            for i in range(16):
                store(Y.tile(i, 0, shape=(16, 64)), recv(done))

        process("generator").produces(work).body(generate)
        worker = process("worker").consumes(work).produces(done).body(work_on)
        process("collector").consumes(done).body(collect)
        replicate(worker, 2)


    @program
    def split_join(X: In[Tensor[256, 64, f32]], Y: Out[Tensor[256, 64, f32]]):
        loaded = Channel[Tile[32, 64, f32]](depth=2)
        left_in = Channel[Tile[32, 64, f32]](depth=2)
        right_in = Channel[Tile[32, 64, f32]](depth=2)
        left_out = Channel[Tile[32, 64, f32]](depth=2)
        right_out = Channel[Tile[32, 64, f32]](depth=2)
        joined = Channel[Tile[32, 64, f32]](depth=2)

        @process(produces=[loaded])
        def src():
            for i in range(8):
                send(loaded, load(X.tile(i, 0, shape=(32, 64))))

        @process(consumes=[left_in], produces=[left_out])
        def left():
            for t in consume(left_in):
                send(left_out, muls(t, 2.0))

        @process(consumes=[right_in], produces=[right_out])
        def right():
            for t in consume(right_in):
                send(right_out, muls(t, 3.0))

        @process(consumes=[joined])
        def sink():
            for i in range(8):
                store(Y.tile(i, 0, shape=(32, 64)), recv(joined))

        connect([loaded], [left_in, right_in])                         # round robin: even items left
        connect([left_out, right_out], [joined])


    @program
    def doc_pipeline(X: In[Tensor[256, 128, f32]], Y: Out[Tensor[256, 128, f32]]):
        loaded = Channel[Tile[32, 128, f32]](depth=2)                 # docs/dialects/csp.md's first program
        computed = Channel[Tile[32, 128, f32]](depth=2)

        @process(produces=[loaded])
        def loader():
            for i in range(8):
                send(loaded, load(X.tile(i, 0, shape=(32, 128))))

        @process(consumes=[loaded], produces=[computed])
        def compute():
            for t in consume(loaded):
                send(computed, exp(t))

        @process(consumes=[computed])
        def storer():
            for i in range(8):
                store(Y.tile(i, 0, shape=(32, 128)), recv(computed))


    @program
    def handshake(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[64, 64, f32]]):
        data = Channel[Tile[32, 64, f32]](depth=1)
        ready = Event()

        @process(consumes=[ready], produces=[data])
        def producer():
            for i in range(2):
                recv(ready)                                            # wait until the consumer is ready
                send(data, load(X.tile(i, 0, shape=(32, 64))))

        @process(produces=[ready], consumes=[data])
        def consumer():
            for i in range(2):
                send(ready)
                store(Y.tile(i, 0, shape=(32, 64)), recv(data))


    @program
    def pingpong(X: In[Tensor[64, 64, f32]], Y: Out[Tensor[64, 64, f32]]):
        ping = Channel[Tile[16, 64, f32]](depth=1)
        pong = Channel[Tile[16, 64, f32]](depth=1)

        @process(produces=[ping], consumes=[pong])
        def left():
            for i in range(4):
                send(ping, load(X.tile(i, 0, shape=(16, 64))))          # then waits for the reply
                store(Y.tile(i, 0, shape=(16, 64)), recv(pong))

        @process(consumes=[ping], produces=[pong])
        def right():
            for i in range(4):
                send(pong, muls(recv(ping), 2.0))


    @workload
    def gemm_k(A: In[Tensor[64, 128, f32]], B: In[Tensor[128, 64, f32]], C: InOut[Tensor[64, 64, f32]]):
        for i, j in P(2, 2):
            for k in P.seq(4):                                         # C's blocks accumulate over K
                mm_acc[i, j, k](A.tile(i, k), B.tile(k, j), C.tile(i, j))

    @kernel
    def step(x: In[Tensor[8, 8, f32]], y: Out[Tensor[8, 8, f32]]):
        store(y, adds(load(x), 1.0))


    @workload
    def running(Y: InOut[Tensor[16, 32, f32]]):                 # Y[:, s + 1] = Y[:, s] + 1, per row block
        for j in P(2):
            for s in P.seq(3):
                step[j, s](Y.tile(j, s), Y.tile(j, s + 1))


    @workload
    def in_place(Z: InOut[Tensor[16, 8, f32]]):                  # Z += 1, three times in sequence
        for j in P(2):
            for s in P.seq(3):
                step[j, s](Z.tile(j, 0), Z.tile(j, 0))


    @workload
    def apart(Y: InOut[Tensor[32, 8, f32]]):                     # reads rows 0..15, writes rows 16..31
        for j in P(2):
            step[j](Y.tile(j, 0), Y.tile(j + 2, 0))
''')


def compile_run(ctx, fn, target, out, **args):
    pkg = ctx.compile(fn, target=target, out=out, force=True)
    return pkg, htp.bind(pkg, ctx).run(**args)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_grid_larger_than_the_device_runs_one_task_at_a_time(ctx, program, tmp_path, target):
    x = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    pkg, r = compile_run(ctx, program.big_grid, target, tmp_path / "pkg", X=x)
    np.testing.assert_array_equal(np.asarray(r["Y"]), 2 * x)
    if target != "aie-npu1":
        return  # pto-a2a3sim: 32 tasks on 24 AIC / 48 AIV cores; the orchestration below is AIE's
    doc = json.loads((pkg.path / "codegen/aie/big_grid/orchestration.json").read_text())
    assert doc["schema"] == "htp.aie.orchestration.v1" and list(doc["kernels"]) == ["scale"]
    assert (pkg.path / "codegen/aie/big_grid/tasks/scale/aie.mlir").is_file()
    assert r.report["orchestrated"] is True and r.report["tasks"] == 32
    assert [t["kernel"] for t in r.report["task_estimates"]] == ["scale"] * 32
    events = [e for e in json.loads((r.run_dir / "trace.json").read_text())["traceEvents"] if e.get("ph") == "X"]
    assert len(events) == 32 and {e["name"] for e in events} == {"scale"}
    assert sorted(e["args"]["i"] for e in events) == list(range(32))


def test_runtime_views_ragged_rows_and_scalars_agree_with_pto_and_numpy(ctx, program, tmp_path):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    idx = np.array([31, 0, 5, 5, 17, 2, 9, 30], np.int32)
    lens = np.array([0, 1, 2, 3, 0, 4, 1, 2], np.int32)
    expected = 2 * x[idx] + 0.5 * lens[:, None]
    out = {}
    for target in ("aie-npu1", "pto-a2a3sim"):
        _, r = compile_run(ctx, program.gathered, target, tmp_path / target, X=x, idx=idx, lens=lens, s=0.5)
        out[target] = np.asarray(r["Y"])
        np.testing.assert_allclose(out[target], expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out["aie-npu1"], out["pto-a2a3sim"])


def test_bad_runtime_data_is_refused_naming_the_construct(ctx, program, tmp_path):
    x = np.zeros((32, 64), np.float32)
    pkg = ctx.compile(program.gathered, target="aie-npu1", out=tmp_path / "pkg", force=True)
    bound = htp.bind(pkg, ctx)
    ok_idx, ok_lens = np.zeros(8, np.int32), np.zeros(8, np.int32)
    with pytest.raises(htp.RunError, match=r"orchestrated_program\.py:\d+:\d+: error: aie-sim: runtime data: the view of 'X' passed "
                                           r"to kernel 'scale', parameter 'x' covers \[32, 33\) in dimension 0, "
                                           r"outside its extent 32"):
        bound.run(X=x, idx=np.array([0, 1, 2, 3, 4, 5, 6, 32], np.int32), lens=ok_lens, s=1.0)
    with pytest.raises(htp.RunError, match=r"runtime data: lens\[3\] = -2 is a negative ragged length"):
        bound.run(X=x, idx=ok_idx, lens=np.array([0, 0, 0, -2, 0, 0, 0, 0], np.int32), s=1.0)


@pytest.mark.parametrize("target", ["pto-a2a3sim", "aie-npu1"])
def test_a_view_that_drops_a_middle_dimension_reads_strided_rows(ctx, program, tmp_path, target):
    # X[:, i, :] of a [4, 3, 64] tensor is 4 rows 3 * 64 elements apart; backend-pto once addressed it by the
    # stride of the dropped dimension (64) and read the wrong rows.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 64)).astype(np.float32)
    y = rng.standard_normal((3, 4, 64)).astype(np.float32)
    _, r = compile_run(ctx, program.middle, target, tmp_path / "pkg", X=x, Y=y)
    np.testing.assert_allclose(np.asarray(r["Z"]), x.transpose(1, 0, 2) + y, rtol=1e-6, atol=1e-6)


def test_a_kernel_with_more_inputs_than_a_core_has_dma_channels_is_multiplexed(ctx, program, tmp_path):
    # A layernorm with gamma and beta, written as the docs show: three inputs per core do not fit a compute
    # tile's two input DMA channels spatially, so the workload is host-orchestrated with packed objects.
    rng = np.random.default_rng(4)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    g = rng.standard_normal((1, 128)).astype(np.float32)
    b = rng.standard_normal((1, 128)).astype(np.float32)
    c = x - x.mean(axis=1, keepdims=True)
    expected = c / np.sqrt((c * c).mean(axis=1, keepdims=True) + 1e-5) * g + b
    for target in ("aie-npu1", "pto-a2a3sim"):
        pkg, r = compile_run(ctx, program.layernorm, target, tmp_path / target, X=x, gamma=g, beta=b)
        np.testing.assert_allclose(np.asarray(r["Y"]), expected, rtol=1e-4, atol=1e-4)
    assert (tmp_path / "aie-npu1" / "codegen/aie/layernorm/orchestration.json").is_file()


def test_kernel_entries_with_more_inputs_than_dma_channels_are_multiplexed(ctx, program, tmp_path):
    # Kernels compiled as entries, as tile.md shows them: a tensor and two runtime scalars (a scalar takes an
    # input channel on AIE), and the row layernorm with gamma and beta (three tensors). A core has two input
    # DMA channels, so aie-npu1 runs each as one host-orchestrated task with its objects packed.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    rows = rng.standard_normal((16, 128)).astype(np.float32)
    g, b = (rng.standard_normal((1, 128)).astype(np.float32) for _ in range(2))
    c = rows - rows.mean(axis=1, keepdims=True)
    expected = c / np.sqrt((c * c).mean(axis=1, keepdims=True) + 1e-5) * g + b
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg, r = compile_run(ctx, program.affine, target, tmp_path / target / "affine", x=x, a=1.5, b=-0.25)
        np.testing.assert_allclose(np.asarray(r["y"]), x * np.float32(1.5) - np.float32(0.25), rtol=1e-6)
        pkg2, r2 = compile_run(ctx, program.layernorm_rows, target, tmp_path / target / "ln", x=rows, gamma=g, beta=b)
        np.testing.assert_allclose(np.asarray(r2["y"]), expected, rtol=1e-4, atol=1e-4)
        if target == "aie-npu1":
            for p, entry in ((pkg, "affine"), (pkg2, "layernorm_rows")):
                doc = json.loads((p.path / f"codegen/aie/{entry}/orchestration.json").read_text())
                assert list(doc["kernels"]) == [entry]
                assert doc["kernels"][entry]["packed"]["in"][0]["param"] == "x"
            assert r.report["orchestrated"] is True and r.report["tasks"] == 1


def test_a_kernel_entry_mixing_cube_and_vector_work_is_split_on_ascend(ctx, program, tmp_path):
    # Q K^T written as one kernel and compiled as the entry: on pto-a2a3sim it runs as a workload launching it
    # once, cut into a vector part (the transpose) and a cube part (the matmul, with Q's load moved to it).
    rng = np.random.default_rng(8)
    q, k = (rng.standard_normal((32, 64)).astype(np.float32) for _ in range(2))
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg, r = compile_run(ctx, program.scores_t, target, tmp_path / target, q=q, k=k)
        np.testing.assert_allclose(np.asarray(r["s"]), q @ k.T, rtol=1e-5, atol=1e-5)
        if target == "pto-a2a3sim":
            kernels = pkg.path / "codegen/pto/kernels"
            assert sorted(p.relative_to(kernels).as_posix() for p in kernels.glob("ai?/*.cpp")) == [
                "aic/scores_t__1_aic.cpp", "aiv/scores_t__0_aiv.cpp"]
            assert r.report["tasks"] == 2


def test_a_register_handed_through_a_vector_part_and_back_to_the_cube(ctx, program, tmp_path):
    # exp(A @ B) @ B: the middle (vector) part receives p, redefines it and hands it on, through one InOut
    # hand-off tensor on Ascend (it declared h_p twice, and refused to store into the In one).
    rng = np.random.default_rng(10)
    a, b = (rng.standard_normal((32, 32)).astype(np.float32) * 0.1 for _ in range(2))
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg, r = compile_run(ctx, program.cube_vector_cube, target, tmp_path / target, a=a, b=b)
        np.testing.assert_allclose(np.asarray(r["c"]), np.exp(a @ b) @ b, rtol=1e-4, atol=1e-5)
        if target == "pto-a2a3sim":
            assert r.report["tasks"] == 3


def test_an_inout_accumulation_over_launches_runs_on_both_targets(ctx, program, tmp_path):
    # C += A[:, k] @ B[k, :] launch by launch through an InOut view: aie-npu1 host-orchestrates it (object FIFOs
    # move data one way), pto-a2a3sim splits each launch into a cube part and a vector part (the add).
    rng = np.random.default_rng(9)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    c = rng.standard_normal((64, 64)).astype(np.float32)
    for target, tasks in (("pto-a2a3sim", 32), ("aie-npu1", 16)):
        _, r = compile_run(ctx, program.gemm_k, target, tmp_path / target, A=a, B=b, C=c.copy())
        np.testing.assert_allclose(np.asarray(r["C"]), c + a @ b, rtol=1e-4, atol=1e-4)
        assert r.report["tasks"] == tasks  # 16 launches; on Ascend two parts each (c's load moved to the add)


def test_a_step_reading_what_an_earlier_step_wrote_runs_in_order(ctx, program, tmp_path):
    # A P.seq step reading the tile the step before wrote to the same InOut tensor (a running sum, an in-place
    # update): aie-npu1's spatial mapping streams every input ahead of the outputs, so each step read the old
    # values; such a workload runs host-orchestrated, task by task in order. Reads and writes of disjoint
    # elements keep the spatial mapping.
    y = np.zeros((16, 32), np.float32)
    expected = np.repeat(np.arange(4, dtype=np.float32), 8)[None, :].repeat(16, axis=0)
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg, r = compile_run(ctx, program.running, target, tmp_path / target / "running", Y=y.copy())
        np.testing.assert_array_equal(np.asarray(r["Y"]), expected)
        _, r = compile_run(ctx, program.in_place, target, tmp_path / target / "in_place", Z=np.zeros((16, 8), np.float32))
        np.testing.assert_array_equal(np.asarray(r["Z"]), np.full((16, 8), 3, np.float32))
        x = np.arange(32 * 8, dtype=np.float32).reshape(32, 8)
        apart_pkg, r = compile_run(ctx, program.apart, target, tmp_path / target / "apart", Y=x.copy())
        np.testing.assert_array_equal(np.asarray(r["Y"]), np.concatenate([x[:16], x[:16] + 1]))
        if target == "aie-npu1":
            assert (pkg.path / "codegen/aie/running/orchestration.json").is_file()
            notes = [d["message"] for d in pkg.diagnostics if d["code"] == "aie.orchestrated"]
            assert any("the task of core 'step[0]' at iteration 1 reads elements of 'Y' that the task of core "
                       "'step[0]' at iteration 0 writes" in n for n in notes), notes
            assert not (apart_pkg.path / "codegen/aie/apart/orchestration.json").exists()
            assert (apart_pkg.path / "codegen/aie/apart/mapping.json").is_file()


def test_an_accumulator_loaded_from_memory_runs_on_both_targets(ctx, program, tmp_path):
    # AIE's kernels accumulate anywhere; Ascend's cube accumulates in L0C, which only matmuls fill: backend-pto
    # computes a fresh product and adds the loaded tile to it on the vector core (it refused the kernel, saying
    # how to write that by hand).
    rng = np.random.default_rng(10)
    a, b, c = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(3))
    for target in ("aie-npu1", "pto-a2a3sim"):
        _, r = compile_run(ctx, program.mm_loaded_acc, target, tmp_path / target, a=a, b=b, c=c.copy())
        np.testing.assert_allclose(np.asarray(r["c"]), c + a @ b, rtol=1e-4, atol=1e-4)


def test_a_dimension_bound_at_run_time_runs_on_both_targets(ctx, program, tmp_path):
    # Tensor["B", 64, f32]: one package serves every batch size; on aie-npu1 the host-orchestrated workload takes
    # B from the arguments (each task's views are static), and an omitted output is allocated B rows.
    rng = np.random.default_rng(11)
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg = ctx.compile(program.scale_batch, target=target, out=tmp_path / target, force=True)
        manifest_params = [e for e in pkg.manifest["entrypoints"] if e["name"] == "scale_batch"][0]["params"]
        assert manifest_params[0]["shape"] == ["B", 64]
        for rows in (48, 80):
            x = rng.standard_normal((rows, 64)).astype(np.float32)
            r = htp.bind(pkg, ctx).run(X=x, s=0.5)
            assert np.asarray(r["Y"]).shape == (rows, 64)
            np.testing.assert_array_equal(np.asarray(r["Y"]), x * np.float32(0.5))


def test_a_csp_program_reads_its_runtime_scalar_on_both_targets(ctx, program, tmp_path):
    # On aie-npu1 the scalar is a one-element object moved to the process core that reads it each iteration.
    x = np.random.default_rng(12).standard_normal((128, 64)).astype(np.float32)
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg = ctx.compile(program.scaled_pipe, target=target, out=tmp_path / target, force=True)
        for s in (1.5, -0.25):
            r = htp.bind(pkg, ctx).run(X=x, s=s)
            np.testing.assert_array_equal(np.asarray(r["Y"]), x * np.float32(s))


def test_replicated_csp_workers_with_their_own_trip_counts_run_on_both_targets(ctx, program, tmp_path):
    # replicate(worker, 2): the generator and the collector run 16 iterations, each worker 8; the workers take
    # the shared channel's items round robin (pto-a2a3sim: tasks submitted in each channel's item order; aie-npu1:
    # a core per replica, the single processes rotating over per-replica FIFOs).
    x = np.random.default_rng(13).standard_normal((256, 64)).astype(np.float32)
    for target, tasks in (("pto-a2a3sim", 48), ("aie-npu1", None)):
        _, r = compile_run(ctx, program.fanout, target, tmp_path / target, X=x)
        np.testing.assert_array_equal(np.asarray(r["Y"]), np.maximum(x, 0))
        if tasks:
            assert r.report["tasks"] == tasks  # 16 + 2 x 8 + 16


def test_csp_links_distribute_and_join_round_robin_on_both_targets(ctx, program, tmp_path):
    # connect([loaded], [left_in, right_in]) deals items out in turn, connect([left_out, right_out], [joined])
    # takes them back in turn: even blocks doubled, odd ones tripled, in order. pto-a2a3sim runs each link part
    # as a copy task per item; aie-npu1 folds the links into the loader's and the sink's rotations.
    x = np.random.default_rng(14).standard_normal((256, 64)).astype(np.float32)
    want = x.reshape(8, 32, 64) * np.array([2.0, 3.0] * 4, np.float32)[:, None, None]
    for target in ("pto-a2a3sim", "aie-npu1"):
        _, r = compile_run(ctx, program.split_join, target, tmp_path / target, X=x)
        np.testing.assert_array_equal(np.asarray(r["Y"]), want.reshape(256, 64))


def test_the_csp_docs_first_program_fits_an_aie_core(ctx, program, tmp_path):
    # 16 KB items on depth-2 channels: an AIE core's 64 KB hold them because a received or sent tile is the
    # acquired object itself (no copy on the stack) and the loader's input from the host is single-buffered
    # when double buffering would not fit; the declared channel depths stay.
    x = np.random.default_rng(16).standard_normal((256, 128)).astype(np.float32)
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg, r = compile_run(ctx, program.doc_pipeline, target, tmp_path / target, X=x)
        np.testing.assert_allclose(np.asarray(r["Y"]), np.exp(x), rtol=1e-6)
        if target == "aie-npu1":
            mlir = (pkg.path / "codegen/aie/doc_pipeline/aie.mlir").read_text()
            assert "aie.objectfifo @in_X(%tile_0_0, {%tile_0_2}, 1 : i32)" in mlir
            assert "aie.objectfifo @ch_loaded(%tile_0_2, {%tile_0_3}, 2 : i32)" in mlir
            assert mlir.count("stack_size = 1024 : i32") == 3
            compute = (pkg.path / "codegen/aie/doc_pipeline/kernels/proc_compute.cc").read_text()
            assert "l_t is the object a0" in compute and "was computed in the object a1" in compute


def test_a_round_trip_within_one_iteration_runs_in_steps_on_both_targets(ctx, program, tmp_path):
    # A process that waits, within an iteration, for the reply to what it sent (ping-pong), and an Event
    # handshake: both backends cut such an iteration where a receive follows a send, into steps that each
    # receive before they send (pto-a2a3sim: a task per step; aie-npu1: a kernel call per step, each with its
    # own acquires and releases), so nothing waits for what it gives itself.
    x = np.random.default_rng(15).standard_normal((64, 64)).astype(np.float32)
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg, r = compile_run(ctx, program.pingpong, target, tmp_path / target / "pp", X=x)
        np.testing.assert_array_equal(np.asarray(r["Y"]), 2 * x)
        if target == "pto-a2a3sim":
            assert r.report["tasks"] == 12  # left's 4 iterations in 2 steps each, right's 4
        _, r = compile_run(ctx, program.handshake, target, tmp_path / target / "hs", X=x)
        np.testing.assert_array_equal(np.asarray(r["Y"]), x)


def test_single_head_attention_written_once_runs_on_both_targets(ctx, program, tmp_path):
    # Kernels as a user splits the maths (a transpose, Q K^T, a row softmax, P V), intermediates between
    # them, rows tiled: one source for both vendors.
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(3))
    s = q @ k.T * 0.125
    p = np.exp(s - s.max(axis=1, keepdims=True))
    expected = (p / p.sum(axis=1, keepdims=True)) @ v
    for target in ("pto-a2a3sim", "aie-npu1"):
        _, r = compile_run(ctx, program.attention, target, tmp_path / target, Q=q, K=k, V=v)
        np.testing.assert_allclose(np.asarray(r["O"]), expected, rtol=1e-4, atol=1e-5)


def test_a_kernel_mixing_cube_and_vector_work_is_split_on_ascend(ctx, program, tmp_path):
    # One kernel computes Q K^T (cube), a row softmax (vector) and P V (cube). pto-a2a3sim runs each kernel
    # on one core type, so backend-pto cuts it into three parts with hand-off tensors; aie-npu1 runs it whole.
    rng = np.random.default_rng(6)
    q = rng.standard_normal((64, 32)).astype(np.float32)
    kt, v = (rng.standard_normal((32, 32)).astype(np.float32) for _ in range(2))
    s = q @ kt * 0.125
    p = np.exp(s - s.max(axis=1, keepdims=True))
    expected = (p / p.sum(axis=1, keepdims=True)) @ v
    results = {}
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg, r = compile_run(ctx, program.fused_attention, target, tmp_path / target, Q=q, KT=kt, V=v)
        results[target] = (pkg, r)
        np.testing.assert_allclose(np.asarray(r["O"]), expected, rtol=1e-4, atol=1e-5)
    pkg, r = results["pto-a2a3sim"]
    kernels = pkg.path / "codegen/pto/kernels"
    assert sorted(p.name for p in kernels.glob("ai?/*.cpp")) == ["attn_rows__0_aic.cpp", "attn_rows__1_aiv.cpp",
                                                                 "attn_rows__2_aic.cpp"]
    assert r.report["tasks"] == 12  # 4 launches x 3 parts, ordered through the hand-offs
    orchestration = (kernels / "orchestration/fused_attention.cpp").read_text()
    # The hand-off tensors: S from the first cube part to the vector part, P from it to the second cube part,
    # one slot per launch.
    assert orchestration.count("TensorCreateInfo w__attn_rows_") == 2
    assert "w__attn_rows_s_shape[3] = {4, 16, 32}" in orchestration


def test_mixes_that_cannot_be_split_say_why(ctx, program, tmp_path):
    with pytest.raises(htp.CompileError, match=r"kernel that mixes cube and vector work is launched under a loop whose "
                                               r"extent is known only at run time in workload 'fused_ragged'"):
        ctx.compile(program.fused_ragged, target="pto-a2a3sim", out=tmp_path / "a", force=True)
    # A loop of static bounds mixing the two, its register carried, is cut into parts (htp::entry_parts_workload).
    pkg = ctx.compile(program.loop_mix, target="pto-a2a3sim", out=tmp_path / "b", force=True)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 32), dtype=np.float32)
    b = rng.standard_normal((32, 32), dtype=np.float32)
    want = ((a @ b) * 0.5 @ b) * 0.5
    np.testing.assert_allclose(htp.bind(pkg, ctx).run(A=a, B=b)["C"], want, rtol=1e-4, atol=1e-4)


def test_a_workload_compiled_from_python_takes_its_schedule_along(program):
    from htp.capture import capture
    names = [e["name"] for e in capture(program.batched_vadd)["attrs"]["htp.capture"]["entries"]]
    assert names == ["scale", "batched_vadd", "batched_schedule"]


def test_timing_batched_issues_ready_tasks_in_batches(ctx, program, tmp_path):
    # 16 independent tasks under timing(batched(4)): pto-sim's scheduler issues them four at a time (the
    # report counts the batches); aie-npu1 has no issue step and says so in a note. Same numbers.
    x = np.random.default_rng(7).standard_normal((32, 64)).astype(np.float32)
    expected = np.zeros_like(x)
    expected[:16] = 2 * x[:16]
    for target in ("pto-a2a3sim", "aie-npu1"):
        pkg = ctx.compile(program.batched_vadd, target=target, out=tmp_path / target, force=True)
        # A batch waits for its tasks up to batch_wait_us: a second here, so that a slow (sanitizer) build
        # forms the same batches; the default is a millisecond.
        options = {"batch_wait_us": 1000000} if target == "pto-a2a3sim" else None
        r = htp.bind(pkg, ctx).run(X=x, options=options)
        np.testing.assert_array_equal(np.asarray(r["Y"])[:16], expected[:16])
        if target == "pto-a2a3sim":
            assert r.report["runtime"]["batch"] == 4
            assert r.report["dispatch_batches"] == {"4": 4}, r.report["dispatch_batches"]


def test_a_pipe_over_channels_streams_its_stages_in_order(ctx, program, tmp_path):
    x = np.random.default_rng(2).standard_normal((32, 64)).astype(np.float32)
    pkg, r = compile_run(ctx, program.piped, "aie-npu1", tmp_path / "pkg", X=x)
    np.testing.assert_array_equal(np.asarray(r["Y"]), 4 * x)
    doc = json.loads((pkg.path / "codegen/aie/piped/orchestration.json").read_text())
    assert doc["channels"] == {"rows": {"shape": [1, 64], "dtype": "f32"}}
    names = [e["name"] for e in json.loads((r.run_dir / "trace.json").read_text())["traceEvents"] if e.get("ph") == "X"]
    assert len(names) == 64


def test_task_designs_take_one_input_and_one_output_fifo(ctx, tmp_path):
    # flash_decode's block_softmax writes three tensors and merge reads three: a core has two DMA channels
    # each way, so the task designs pack every object into one FIFO each way (and validate).
    import flash_decode
    pkg = ctx.compile(flash_decode.flash_decode, target="aie-npu1", out=tmp_path / "pkg", force=True)
    doc = json.loads((pkg.path / "codegen/aie/flash_decode/orchestration.json").read_text())
    packed = doc["kernels"]["block_softmax"]["packed"]
    assert [e["param"] for e in packed["in"]] == ["s"] and [e["param"] for e in packed["out"]] == ["p", "m_part", "l_part"]
    fifos = json.loads((pkg.path / "codegen/aie/flash_decode/tasks/merge/fifos.json").read_text())
    assert sorted(f["name"] for f in fifos["fifos"]) == ["in_packed_in", "out_packed_out"]
    mlir = (pkg.path / "codegen/aie/flash_decode/tasks/merge/kernels/merge_packed.cc").read_text()
    assert 'extern "C" void merge_packed(int32_t *in, int32_t *out)' in mlir


def test_aie_xrt_says_an_orchestrated_entry_has_no_host_program(ctx, program, tmp_path):
    pkg = ctx.compile(program.big_grid, target="aie-npu1", out=tmp_path / "pkg", force=True, binding="aie.xrt")
    with pytest.raises(htp.RunError, match=r"aie-xrt: entry 'big_grid' is host-orchestrated .* run it with aie.sim"):
        htp.bind(pkg, ctx).run(X=np.zeros((32, 64), np.float32))


def test_a_tampered_orchestration_is_refused_not_followed(ctx, program, tmp_path):
    pkg = ctx.compile(program.big_grid, target="aie-npu1", out=tmp_path / "pkg", force=True)
    path = pkg.path / "codegen/aie/big_grid/orchestration.json"
    doc = json.loads(path.read_text())
    doc["kernels"]["scale"]["design"] = "tasks/../../../../outside"
    path.write_text(json.dumps(doc))
    bound = htp.bind(pkg, ctx)
    x = np.zeros((32, 64), np.float32)
    with pytest.raises(htp.RunError, match="package"):  # the manifest's hash of the file no longer matches
        bound.run(X=x)
    with pytest.raises(htp.RunError, match=r"kernel 'scale' names design 'tasks/\.\./\.\./\.\./\.\./outside', which is "
                                           r"not a tasks/<name> directory of the entry"):
        bound.run(X=x, verify=False)
    del doc["kernels"]
    path.write_text(json.dumps(doc))
    with pytest.raises(htp.RunError, match="has no 'kernels' object"):
        bound.run(X=x, verify=False)
