"""Issue 21: a multi-layer MoE decoder with a paged KV cache served with continuous batching
(examples/llm_decode): one compile per target, every decode step planned by the host and run without a
compiler, every token equal to the NumPy reference's, and bad requests, block tables and weights refused
with messages that name them."""
import json
import os
import pathlib
import sys

import numpy as np
import pytest

import htp

EXAMPLES = pathlib.Path(os.environ.get("HTP_EXAMPLES", pathlib.Path(__file__).resolve().parents[2] / "examples"))
sys.path.insert(0, str(EXAMPLES / "llm_decode"))

import model  # noqa: E402
import serve  # noqa: E402

# The cells of docs/parity.md these tests establish (scripts/parity_table.py): the model on both targets.
PARITY = {
    "test_tokens_and_logits_equal_the_reference": [
        (c, t) for c in ("ragged domain (`Ragged`)", "CSR selection (`P.sel` over `Sparse`)", "`P.when` on tensor elements",
                         "view offset read from a tensor (block table)", "several launches with intermediates",
                         "`P.pipe` over channels", "`transpose`", "column broadcast (`colexpand_*`)",
                         "view dropping a middle dimension")
        for t in ("pto-a2a3sim", "aie-npu1")],
}

TARGETS = serve.TARGETS


class CountingContext(htp.Context):
    """An htp.Context that counts its compiles."""

    def __init__(self):
        super().__init__()
        self.compiles = 0

    def compile(self, *args, **kwargs):
        self.compiles += 1
        return super().compile(*args, **kwargs)


@pytest.fixture(scope="module", params=TARGETS)
def served(request, tmp_path_factory):
    cfg = model.Config.for_target(request.param)
    weights = model.make_weights(cfg)
    ctx = CountingContext()
    out = tmp_path_factory.mktemp("llm") / "pkg"
    engine = serve.Engine(cfg, weights, request.param, out=out, ctx=ctx,
                          cache_dir=tmp_path_factory.mktemp("cache"), keep_traces=True)
    server = serve.Server(engine)
    requests = serve.make_requests(cfg)
    finished = server.serve(requests)
    return cfg, weights, ctx, engine, server, requests, finished


def test_tokens_and_logits_equal_the_reference(served):
    cfg, weights, _, _, _, requests, finished = served
    assert len(finished) == len(requests) >= 8
    lines = []
    assert serve.check_against_reference(cfg, weights, finished, rtol=1e-3, atol=1e-3, log=lines.append), \
        "\n".join(lines)


def test_one_compile_and_no_compiler_after_the_first_step(served):
    _, _, ctx, engine, server, _, _ = served
    assert ctx.compiles == 1
    assert len(server.step_stats) >= 32
    later = [r for r in engine.runs if r.step > 0]
    assert later and all(r.report["build"]["compiler_invocations"] == 0 for r in later), \
        [(r.step, r.entry, r.report["build"]) for r in later if r.report["build"]["compiler_invocations"]]
    assert all(r.report["build"]["cache"] == "hit" for r in later)
    entries = {r.entry for r in engine.runs}
    assert entries == {"embed", "attn_layer", "moe_layer", "lm_head"}


def test_the_batch_changes_between_steps(served):
    cfg, _, _, _, server, requests, finished = served
    stats = server.step_stats
    sizes = [s["requests"] for s in stats]
    assert max(sizes) == cfg.slots, "the slots never all filled: no request waited"
    # A request that waited took the slot of one that finished, while the others kept running.
    first_finish = min(r.finished_step for r in finished)
    late = [r for r in finished if r.admitted_step > first_finish]
    assert late and all(r.admitted_step > r.arrival for r in late[:1]), "no request waited for a freed slot"
    assert any(len(s["request_ids"]) > 1 for s in stats if s["step"] == late[0].admitted_step)
    changes = sum(1 for a, b in zip(stats, stats[1:]) if a["request_ids"] != b["request_ids"])
    assert changes >= 16, f"the batch changed between only {changes} pairs of consecutive steps"


def test_paging_reuses_freed_blocks(served):
    _, _, _, _, server, requests, _ = served
    assert max(r.length for r in requests) > 2 * server.cfg.block, "no request spans three KV blocks"
    assert server.blocks.reserved == 0 and len(server.blocks.free) == server.cfg.cache_blocks


def test_observability_per_step_report_and_one_trace(served, tmp_path):
    _, _, _, engine, server, _, _ = served
    s = server.step_stats[5]
    assert s["tasks"] > 0 and s["runs"] == 2 + 2 * engine.cfg.layers
    names = set(s["tasks_by_kernel"])  # a pipe's stages may run copies of their kernels (pto: lm_head_head_proj)
    for kernel in ("scores", "merge", "expert_up", "proj", "head_proj", "rms_norm"):
        assert any(k == kernel or k.endswith("_" + kernel) for k in names), (kernel, names)
    assert sum(s["tasks_by_kernel"].values()) == s["tasks"]
    assert s["sim_seconds"] > 0 and s["cache_hits"] > 0
    path = serve.write_trace(engine, tmp_path / "trace.json", steps={3, 4, 5})
    events = json.loads(pathlib.Path(path).read_text())["traceEvents"]
    spans = [e["name"] for e in events if e.get("ph") == "X" and e["pid"] == 0 and e["tid"] == 0]
    assert spans == ["step 3", "step 4", "step 5"]
    kernels = {e["name"] for e in events if e.get("ph") == "X" and e["pid"] == 1}
    assert {"scores", "block_softmax", "weigh", "merge", "swiglu"} <= kernels
    threads = {e["args"]["name"] for e in events if e.get("name") == "thread_name" and e["pid"] == 1}
    if engine.target.startswith("pto"):      # cube and vector cores
        assert any(t.startswith("AIC") for t in threads) and any(t.startswith("AIV") for t in threads)
    else:                                    # host-orchestrated: one task at a time
        assert threads == {"tasks (one at a time)"}
    table = serve.profile_table(server.step_stats)
    assert len(table.splitlines()) == len(server.step_stats) + 3 and "compiler runs" in table


def test_a_request_longer_than_the_cache_is_refused_before_anything_runs(served):
    cfg, weights, _, engine, _, _, _ = served
    server = serve.Server(engine)
    runs = len(engine.runs)
    long = serve.Request("too-long", prompt=[1] * (cfg.max_context - 2), max_new=8)
    with pytest.raises(serve.ServingError, match=rf"request 'too-long' needs {cfg.max_context + 5} cache positions .* "
                                                 rf"at most {cfg.max_context}"):
        server.serve([serve.Request("fine", [1, 2], 2), long])
    assert len(engine.runs) == runs, "a run started before the request was refused"


def test_a_block_table_outside_the_cache_is_a_diagnostic(served):
    cfg, _, _, engine, _, _, _ = served
    server = serve.Server(engine)
    r = serve.Request("r", [3, 4, 5], 2)
    server.slots[0] = r
    server.blocks.reserve(1)
    plan = server.plan()
    plan.table[0] = cfg.cache_blocks + 3
    with pytest.raises(htp.RunError, match=r"model\.py:\d+:\d+: error: (aie-sim: )?runtime data: the view of 'KT' passed to kernel "
                                           r"'scores', parameter 'kt' covers \[\d+, \d+\) in dimension 1, outside "
                                           rf"its extent {cfg.cache_tokens}"):
        engine.step(plan)


def test_a_misshaped_weight_names_the_tensor_and_both_shapes(served):
    cfg, weights, _, engine, _, _, _ = served
    bad = dict(weights)
    bad["layer1.wo"] = np.zeros((cfg.hidden, cfg.hidden + 1), np.float32)
    with pytest.raises(ValueError, match=r"weight 'layer1.wo' has shape \(512, 513\), but the model expects \(512, 512\)"):
        serve.Engine(cfg, bad, engine.target)
    # The binding's own check, for a caller that skips the model's: the parameter and both shapes.
    with pytest.raises(htp.ArgumentValueError, match=r"wqkv.*\(512, 700\).*\(512, 768\)|wqkv.*512, 700.*512, 768"):
        engine.bound.run("attn_layer", X=np.zeros((cfg.slots, cfg.hidden), np.float32),
                         wqkv=np.zeros((cfg.hidden, 700), np.float32))
