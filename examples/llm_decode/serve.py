"""Serving a multi-layer MoE decoder with continuous batching, on a compiled HTP package.

The top of the ladder: kernels (examples/gemm.py, softmax.py) -> megakernels (flash_decode.py, moe.py,
serving_routine.py) -> this serving routine. The model (model.py) is compiled once per target into one
package of four entries; every decode step the host routine (this file) plans the step — which request
sits in which batch slot, each request's position, the KV-cache blocks it owns (a block table), the key mask
of its last block, the experts the router chose (top-k, as CSR) — and runs the package's entries with that
plan as runtime data. Nothing is recompiled after the first step: `report["build"]["compiler_invocations"]`
of every later run is 0, and the routine asserts it.

Requests arrive and finish between steps: a request takes a free slot when it arrives (and the cache has
room for it), feeds its prompt one token per step (its K/V go into the cache), then generates greedily
until it has `max_new` tokens, frees its slot and blocks, and the next waiting request takes them.

    python examples/llm_decode/serve.py --target pto-a2a3sim|aie-npu1 [--requests 12] [--profile] [--trace out.json]

Checks every generated token and the last logits of every request against reference.py (NumPy); exits 0
only when they agree. Targets: pto-a2a3sim (kernels on the simulated cube and vector cores, the task graph
expanded by the simulated AICPU) and aie-npu1 (aie-sim: the workloads are host-orchestrated, each kernel a
single-core design; the same model, its tile sizes cut to fit a core's 64 KiB, model.Config.for_target).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import pathlib
import resource
import sys
import tempfile
import time

import numpy as np

import htp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import model  # noqa: E402
from reference import Reference, route  # noqa: E402

TARGETS = ["pto-a2a3sim", "aie-npu1"]


class ServingError(ValueError):
    """A request or a plan the routine refuses before anything runs."""


@dataclasses.dataclass
class Request:
    id: str
    prompt: list
    max_new: int
    arrival: int = 0                   # the step it arrives at
    generated: list = dataclasses.field(default_factory=list)
    last_logits: np.ndarray | None = None
    slot: int = -1
    pos: int = 0                       # tokens already in the cache
    blocks: list = dataclasses.field(default_factory=list)
    admitted_step: int = -1
    finished_step: int = -1

    @property
    def length(self) -> int:           # cache positions it needs in all
        return len(self.prompt) + self.max_new - 1


class BlockAllocator:
    """The KV cache's fixed-size blocks: a free list, and blocks reserved for admitted requests so that a
    running request never waits for one."""

    def __init__(self, n: int):
        self.free = list(range(n - 1, -1, -1))
        self.reserved = 0

    def can_reserve(self, k: int) -> bool:
        return len(self.free) - self.reserved >= k

    def reserve(self, k: int):
        self.reserved += k

    def take(self) -> int:
        self.reserved -= 1
        return self.free.pop()

    def give_back(self, blocks, unused_reservation: int):
        self.free.extend(reversed(blocks))
        self.reserved -= unused_reservation


@dataclasses.dataclass
class Run:
    step: int
    entry: str
    report: dict
    start: float                       # host clock (time.perf_counter) around bound.run
    end: float
    trace: dict | None                 # the run's trace.json, when the engine keeps them


@dataclasses.dataclass
class StepPlan:
    """The runtime data of one step (NumPy arrays, the shapes the entries take)."""
    tok: np.ndarray
    pos: np.ndarray
    slot: np.ndarray
    nblk: np.ndarray
    table: np.ndarray
    mask: np.ndarray
    active: list                       # (slot, request) pairs


class Engine:
    """The compiled model on one target: one package, its bound entries, the weights and the KV caches."""

    def __init__(self, cfg: model.Config, weights: dict, target: str, *, out=None, ctx=None, cache_dir=None,
                 keep_traces=False):
        model.check_weights(cfg, weights)
        self.cfg, self.target, self.weights = cfg, target, weights
        self.ctx = ctx or htp.Context()
        self.out = pathlib.Path(out) if out else pathlib.Path(tempfile.mkdtemp(prefix="htp-llm-")) / "pkg"
        entries = model.build(cfg)
        t0 = time.perf_counter()
        self.package = self.ctx.compile(list(entries.values()), target=target, out=self.out, force=True)
        self.compile_s = time.perf_counter() - t0
        self.bound = htp.bind(self.package, self.ctx)
        self.cache_dir = cache_dir
        self.cos, self.sin = model.rope_tables(cfg)
        shape_kt = (cfg.kv_width, cfg.cache_tokens)
        shape_v = (cfg.cache_tokens, cfg.kv_width)
        self.kt = [np.zeros(shape_kt, np.float32) for _ in range(cfg.layers)]
        self.vc = [np.zeros(shape_v, np.float32) for _ in range(cfg.layers)]
        self.runs = []                 # every run: Run
        self.step_index = 0
        self.keep_traces = keep_traces

    def _run(self, entry: str, **args):
        t0 = time.perf_counter()
        r = self.bound.run(entry, cache_dir=self.cache_dir, **args)
        t1 = time.perf_counter()
        trace = None
        if self.keep_traces:           # the next run replaces logs/run/: keep this one's events now
            trace = json.loads((r.run_dir / "trace.json").read_text())
        self.runs.append(Run(self.step_index, entry, r.report, t0, t1, trace))
        return r

    def step(self, plan: StepPlan) -> np.ndarray:
        """One decode step for every slot: the logits [slots, vocab]."""
        cfg, w = self.cfg, self.weights
        x = self._run("embed", emb=w["embedding"], tok=plan.tok)["X"]
        for layer in range(cfg.layers):
            p = f"layer{layer}."
            r = self._run("attn_layer", X=x, attn_norm=w[p + "attn_norm"], wqkv=w[p + "wqkv"], wo=w[p + "wo"],
                          ffn_norm=w[p + "ffn_norm"], router=w[p + "router"], cos=self.cos, sin=self.sin,
                          KT=self.kt[layer], VC=self.vc[layer], pos=plan.pos, slot=plan.slot, nblk=plan.nblk,
                          table=plan.table, mask=plan.mask)
            gate, indptr, indices = self.plan_routing(np.asarray(r["RL"]), plan.active)
            x = self._run("moe_layer", H2=r["H2"], XN2=r["XN2"], w1=w[p + "w1"], w3=w[p + "w3"], w2=w[p + "w2"],
                          gate=gate, indptr=indptr, indices=indices)["Y"]
        logits = self._run("lm_head", X=x, final_norm=w["final_norm"], w=w["lm_head"])["LOGITS"]
        self.step_index += 1
        return np.asarray(logits)

    def plan_routing(self, router_logits, active):
        """Top-k experts of every active token as CSR (indptr, indices) and their gates [slots, experts]."""
        cfg = self.cfg
        gate = np.zeros((cfg.slots, cfg.experts), np.float32)
        indptr = np.zeros(cfg.slots + 1, np.int32)
        indices = np.zeros(cfg.slots * cfg.top_k, np.int32)
        rows = {s: route(router_logits[s], cfg.top_k) for s, _ in active}
        n = 0
        for s in range(cfg.slots):
            if s in rows:
                chosen, gates = rows[s]
                indices[n:n + len(chosen)] = chosen
                gate[s, chosen] = gates
                n += len(chosen)
            indptr[s + 1] = n
        return gate, indptr, indices


class Server:
    """Continuous batching over an Engine: admission, block allocation, per-step planning, sampling."""

    def __init__(self, engine: Engine):
        self.engine, self.cfg = engine, engine.cfg
        self.blocks = BlockAllocator(self.cfg.cache_blocks)
        self.slots = [None] * self.cfg.slots
        self.waiting = collections.deque()
        self.finished = []
        self.step_stats = []

    def check(self, requests):
        """Refuse, before anything runs, a request the cache cannot hold or whose tokens are out of range."""
        cfg = self.cfg
        for r in requests:
            if not r.prompt or r.max_new < 1:
                raise ServingError(f"request '{r.id}': needs a prompt of at least one token and max_new >= 1")
            if r.length > cfg.max_context:
                raise ServingError(f"request '{r.id}' needs {r.length} cache positions ({len(r.prompt)} prompt + "
                                   f"{r.max_new} new - 1), but a request holds at most {cfg.max_context} "
                                   f"({cfg.max_blocks} blocks of {cfg.block} tokens)")
            need = cfg.blocks_for(r.length)
            if need > cfg.cache_blocks:
                raise ServingError(f"request '{r.id}' needs {need} KV blocks, but the cache has {cfg.cache_blocks}")
            bad = [t for t in r.prompt if not 0 <= t < cfg.vocab]
            if bad:
                raise ServingError(f"request '{r.id}': token {bad[0]} is outside the vocabulary [0, {cfg.vocab})")

    def _admit(self, step):
        cfg = self.cfg
        while self.waiting and self.waiting[0].arrival <= step and None in self.slots:
            r = self.waiting[0]
            need = cfg.blocks_for(r.length)
            if not self.blocks.can_reserve(need):
                break                                    # first come, first served: wait for blocks
            self.waiting.popleft()
            self.blocks.reserve(need)
            r.slot = self.slots.index(None)
            r.admitted_step = step
            self.slots[r.slot] = r

    def plan(self) -> StepPlan:
        cfg = self.cfg
        B, MB, BLK = cfg.slots, cfg.max_blocks, cfg.block
        tok, pos, slot, nblk = (np.zeros(B, np.int32) for _ in range(4))
        table = np.zeros(B * MB, np.int32)
        mask = np.full((B * MB, BLK), model.NEG, np.float32)
        active = []
        for s, r in enumerate(self.slots):
            if r is None:
                continue
            if r.pos % BLK == 0:                         # its next position starts a new block
                r.blocks.append(self.blocks.take())
            tok[s] = r.prompt[r.pos] if r.pos < len(r.prompt) else r.generated[-1]
            pos[s] = r.pos
            slot[s] = r.blocks[r.pos // BLK] * BLK + r.pos % BLK
            nblk[s] = len(r.blocks)
            table[s * MB:s * MB + len(r.blocks)] = r.blocks
            for j in range(len(r.blocks)):               # keys at positions <= pos count
                valid = min(BLK, r.pos + 1 - j * BLK)
                mask[s * MB + j, :valid] = 0.0
            active.append((s, r))
        return StepPlan(tok, pos, slot, nblk, table, mask, active)

    def serve(self, requests, *, max_steps=10_000):
        self.check(requests)
        self.waiting.extend(sorted(requests, key=lambda r: r.arrival))
        step = 0
        while (self.waiting or any(self.slots)) and step < max_steps:
            self._admit(step)
            t0 = time.perf_counter()
            plan = self.plan()
            t_plan = time.perf_counter() - t0
            first_run = len(self.engine.runs)
            t0 = time.perf_counter()
            logits = self.engine.step(plan) if plan.active else None
            t_run = time.perf_counter() - t0
            for s, r in plan.active:
                r.pos += 1
                if r.pos >= len(r.prompt):               # past the prompt: greedy sampling
                    r.generated.append(int(np.argmax(logits[s])))
                    r.last_logits = logits[s].copy()
                if len(r.generated) == r.max_new:        # done: free the slot and the blocks
                    need = self.cfg.blocks_for(r.length)
                    self.blocks.give_back(r.blocks, need - len(r.blocks))
                    r.blocks, self.slots[s], r.finished_step = [], None, step
                    self.finished.append(r)
            self.step_stats.append(step_summary(step, plan, self.engine.runs[first_run:], t_plan, t_run))
            step += 1
        return self.finished


def step_summary(step, plan, runs, t_plan, t_run):
    """The per-step run report: tasks (all and by kernel), simulated time, build-cache use, compiles."""
    by_kernel = collections.Counter()
    tasks = sim_s = compiles = hits = 0
    for run in runs:
        report = run.report
        tasks += int(report.get("tasks", 0))
        by_kernel.update(t["kernel"] for t in report.get("task_estimates") or [])
        sim_s += float(report.get("run_seconds", 0.0))
        build = report.get("build") or {}
        compiles += int(build.get("compiler_invocations", 0))
        hits += int(build.get("hits", 0))
    return {"step": step, "requests": len(plan.active), "request_ids": [r.id for _, r in plan.active], "context": int(plan.pos.sum() + len(plan.active)),
            "runs": len(runs), "tasks": tasks, "tasks_by_kernel": dict(by_kernel), "sim_seconds": sim_s,
            "plan_seconds": t_plan, "run_seconds": t_run, "compiler_invocations": compiles, "cache_hits": hits}


def make_requests(cfg, n=12, seed=1):
    """n requests with different prompt lengths (2 to 40 tokens: one to three KV blocks of 16) and budgets
    (2 to 9 new tokens), one arriving per step: more than the batch's slots, so some wait for a slot."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        prompt = [int(t) for t in rng.integers(0, cfg.vocab, size=int(rng.integers(2, 41)))]
        out.append(Request(id=f"req{i}", prompt=prompt, max_new=int(rng.integers(2, 10)), arrival=i))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=TARGETS[0], choices=TARGETS)
    ap.add_argument("--requests", type=int, default=12)
    ap.add_argument("--out", default=None, help="package directory (default: a temporary directory)")
    ap.add_argument("--profile", action="store_true", help="print the per-step table and a summary")
    ap.add_argument("--trace", default=None, help="write one Perfetto trace of every step's runs here")
    args = ap.parse_args(argv)

    cfg = model.Config.for_target(args.target)
    weights = model.make_weights(cfg)
    engine = Engine(cfg, weights, args.target, out=args.out, keep_traces=bool(args.trace))
    server = Server(engine)
    requests = make_requests(cfg, args.requests)
    finished = server.serve(requests)
    ok = check_against_reference(cfg, weights, finished)
    print(f"package: {engine.package.path}  (compiled once in {engine.compile_s:.2f} s)")
    if args.profile:
        print(profile_table(server.step_stats))
    if args.trace:
        print(f"trace: {write_trace(engine, args.trace)}")
    return 0 if ok else 1


def check_against_reference(cfg, weights, finished, rtol=1e-3, atol=1e-3, log=print) -> bool:
    ref = Reference(cfg, weights)
    ok = True
    for r in sorted(finished, key=lambda r: r.id):
        tokens, logits = ref.decode(r.prompt, r.max_new)
        same = tokens == r.generated
        close = np.allclose(r.last_logits, logits[-1], rtol=rtol, atol=atol)
        err = float(np.max(np.abs(r.last_logits - logits[-1])))
        log(f"{r.id}: prompt {len(r.prompt):2d}, generated {r.generated} "
            f"{'==' if same else '!='} reference {tokens}, last logits max |err| {err:.2e}")
        ok = ok and same and close
    return ok


def profile_table(stats) -> str:
    """The --profile table: per step the requests, their context, the entry runs, tasks, host planning time,
    run time (host clock around the runs), simulated time (the simulators' own run_seconds), time per task,
    build-cache hits and compiler runs; then totals and tasks by kernel."""
    lines = [f"{'step':>4} {'reqs':>4} {'ctx':>5} {'runs':>4} {'tasks':>6} {'plan ms':>8} {'run ms':>8} "
             f"{'sim ms':>8} {'us/task':>8} {'hits':>5} {'compiles':>8}"]
    for s in stats:
        per_task = s["run_seconds"] / s["tasks"] * 1e6 if s["tasks"] else 0.0
        lines.append(f"{s['step']:>4} {s['requests']:>4} {s['context']:>5} {s['runs']:>4} {s['tasks']:>6} "
                     f"{s['plan_seconds'] * 1e3:>8.2f} {s['run_seconds'] * 1e3:>8.1f} {s['sim_seconds'] * 1e3:>8.1f} "
                     f"{per_task:>8.1f} {s['cache_hits']:>5} {s['compiler_invocations']:>8}")
    total = collections.Counter()
    for s in stats:
        total.update(s["tasks_by_kernel"])
    steps = len(stats)
    lines.append(f"{steps} steps, {sum(s['tasks'] for s in stats)} tasks, "
                 f"{sum(s['run_seconds'] for s in stats):.2f} s running, "
                 f"{sum(s['plan_seconds'] for s in stats) * 1e3:.1f} ms planning, "
                 f"{sum(s['compiler_invocations'] for s in stats)} compiler runs; tasks by kernel: "
                 + ", ".join(f"{k} {n}" for k, n in total.most_common()))
    lines.append(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return "\n".join(lines)


def write_trace(engine, path, steps=None) -> str:
    """One Chrome/Perfetto trace of the kept runs: process 0 is the serving routine (a span per step, one per
    entry run inside it), process 1 the simulated device (the runs' worker threads, each task named by its
    kernel), on the host clock (each run's events shifted to when the host started it)."""
    runs = [r for r in engine.runs if r.trace is not None and (steps is None or r.step in steps)]
    if not runs:
        raise ServingError("no run traces were kept: create the Engine with keep_traces=True")
    t_zero = runs[0].start
    us = lambda t: (t - t_zero) * 1e6  # noqa: E731
    events = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "serving routine (host)"}},
              {"ph": "M", "name": "thread_name", "pid": 0, "tid": 0, "args": {"name": "steps"}},
              {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "entry runs"}},
              {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": f"{engine.target} (simulated)"}}]
    threads = {}
    for step in sorted({r.step for r in runs}):
        mine = [r for r in runs if r.step == step]
        events.append({"ph": "X", "pid": 0, "tid": 0, "name": f"step {step}", "ts": us(mine[0].start),
                       "dur": us(mine[-1].end) - us(mine[0].start), "args": {"runs": len(mine)}})
        for r in mine:
            events.append({"ph": "X", "pid": 0, "tid": 1, "name": r.entry, "ts": us(r.start),
                           "dur": us(r.end) - us(r.start), "args": {"step": step, "tasks": r.report.get("tasks")}})
            raw = r.trace["traceEvents"] if isinstance(r.trace, dict) else r.trace
            names = {e["tid"]: e["args"]["name"] for e in raw
                     if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("pid") == 0}
            for e in raw:
                if e.get("ph") != "X" or e.get("pid") != 0:
                    continue                              # the estimate track is per run; not merged
                name = names.get(e["tid"], str(e["tid"]))
                tid = threads.setdefault(name, len(threads))
                events.append({**e, "pid": 1, "tid": tid, "ts": us(r.start) + e["ts"],
                               "args": {**e.get("args", {}), "step": step, "entry": r.entry}})
    for name, tid in threads.items():
        events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": name}})
    pathlib.Path(path).write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}))
    return str(path)


if __name__ == "__main__":
    sys.exit(main())
