#!/usr/bin/env python3
"""Serving the decoder of examples/llm_decode at scale: per decode step on each simulator target, the
tasks, host planning time, run time, time per task and peak RSS; the compile time of the whole model; and
how the run time of a step grows from 8 to 32 requests (4x the per-request work) and from 512 to 4096
tokens of context per request (8x the attention work). The requests' KV caches are filled with random
keys and values up to the context length (no prefill is timed), then STEPS decode steps are timed.

Prints Google Benchmark JSON (bench/report.py tabulates it against bench/targets.json); with --table a
human-readable table instead.

    PYTHONPATH=build/python /usr/bin/python3 bench/serving/llm_decode.py [--table] [--steps N]
"""
import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "llm_decode"))

import model  # noqa: E402
import serve  # noqa: E402

BLOCK = 64
HEADROOM = 16                  # cache positions past the context: the timed steps (--steps < 16)
LONG = 4096                    # the longest context measured (tokens per request)


def peak_rss_reset():
    """Resets the process's peak RSS (Linux: clear_refs 5), so VmHWM then measures what follows."""
    try:
        pathlib.Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mib():
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def fill_batch(server, requests, context, rng):
    """`requests` requests, each with `context` tokens already in every layer's cache (random keys and
    values in blocks taken from the allocator), decoding their next token."""
    cfg, eng = server.cfg, server.engine
    out = []
    for i in range(requests):
        r = serve.Request(id=f"r{i}", prompt=[1] * context, max_new=1_000_000)
        r.generated = [int(rng.integers(0, cfg.vocab))]
        r.pos = context
        need = cfg.blocks_for(context + HEADROOM)
        server.blocks.reserve(need)
        r.blocks = [server.blocks.take() for _ in range(cfg.blocks_for(context))]
        for layer in range(cfg.layers):
            for b in r.blocks:
                cols = slice(b * cfg.block, (b + 1) * cfg.block)
                eng.kt[layer][:, cols] = rng.standard_normal((cfg.kv_width, cfg.block), dtype=np.float32)
                eng.vc[layer][cols, :] = rng.standard_normal((cfg.block, cfg.kv_width), dtype=np.float32)
        r.slot = i
        server.slots[i] = r
        out.append(r)
    return out


def measure(engine, requests, context, steps, rng):
    server = serve.Server(engine)
    fill_batch(server, requests, context, rng)
    rows = []
    for _ in range(steps + 1):                  # the first step warms the package's build cache
        t0 = time.perf_counter()
        plan = server.plan()
        t_plan = time.perf_counter() - t0
        before = len(engine.runs)
        reset = peak_rss_reset()
        t0 = time.perf_counter()
        logits = engine.step(plan)
        t_run = time.perf_counter() - t0
        rss = peak_rss_mib() if reset else float("nan")
        for s, r in plan.active:
            r.pos += 1
            r.generated.append(int(np.argmax(logits[s])))
        runs = engine.runs[before:]
        rows.append({"tasks": sum(int(x.report["tasks"]) for x in runs), "plan_s": t_plan, "run_s": t_run,
                     "sim_s": sum(float(x.report["run_seconds"]) for x in runs), "rss_mib": rss,
                     "compiles": sum(int(x.report["build"]["compiler_invocations"]) for x in runs)})
    return rows[0], rows[1:]


def config(target, slots, context):
    """A model of `slots` batch slots whose requests hold `context` tokens and the timed steps' few more."""
    blocks = -(-(context + HEADROOM) // BLOCK)
    blocks = -(-blocks // 8) * 8               # per-block statistics are rows of whole 32-byte vector blocks
    return model.Config.for_target(target, slots=slots, block=BLOCK, max_blocks=blocks, cache_blocks=slots * blocks)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--targets", default=",".join(serve.TARGETS))
    args = ap.parse_args()
    if not 1 <= args.steps < HEADROOM:
        ap.error(f"--steps must be between 1 and {HEADROOM - 1}")
    rng = np.random.default_rng(0)
    # (requests, context, the package's context) per target
    bench, table = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.targets.split(","):
            long = LONG
            cases = [(8, 512, long), (8, long, long), (32, 512, 512)]
            engines = {}
            step_ms = {}
            for requests, context, capacity in cases:
                key = (requests, capacity)
                if key not in engines:
                    cfg = config(target, requests, capacity)
                    weights = model.make_weights(cfg)
                    eng = serve.Engine(cfg, weights, target, out=pathlib.Path(tmp) / f"{target}-{requests}-{capacity}",
                                       cache_dir=pathlib.Path(tmp) / "cache")
                    engines[key] = eng
                    bench.append({"name": f"BM_LlmDecodeCompile/{target}/slots{requests}", "run_type": "iteration",
                                  "iterations": 1, "real_time": eng.compile_s * 1e3, "cpu_time": eng.compile_s * 1e3,
                                  "time_unit": "ms",
                                  "label": f"{cfg.layers} layers, hidden {cfg.hidden}, {cfg.experts} experts, "
                                           f"{len(model.build(cfg))} entries"})
                eng = engines[key]
                first, rows = measure(eng, requests, context, args.steps, rng)
                run_ms = statistics.median(r["run_s"] for r in rows) * 1e3
                tasks = rows[0]["tasks"]
                row = {"target": target, "requests": requests, "context": context, "tasks": tasks,
                       "plan_ms": statistics.median(r["plan_s"] for r in rows) * 1e3, "run_ms": run_ms,
                       "us_per_task": run_ms * 1e3 / tasks, "rss_mib": max(r["rss_mib"] for r in rows),
                       "compiles": sum(r["compiles"] for r in rows), "first_ms": first["run_s"] * 1e3,
                       "first_compiles": first["compiles"]}
                table.append(row)
                step_ms[(requests, context)] = run_ms
                bench.append({"name": f"BM_LlmDecodeStep/{target}/req{requests}/ctx{context}", "run_type": "iteration",
                              "iterations": len(rows), "real_time": run_ms, "cpu_time": run_ms, "time_unit": "ms",
                              "tasks": tasks, "us_per_task": row["us_per_task"], "plan_ms": row["plan_ms"],
                              "peak_rss_MiB": row["rss_mib"],
                              "label": f"{tasks} tasks, plan {row['plan_ms']:.2f} ms, {row['us_per_task']:.0f} us/task, "
                                       f"peak RSS {row['rss_mib']:.0f} MiB, {row['compiles']} compiler runs "
                                       f"(first step {row['first_ms']:.0f} ms, {row['first_compiles']} compiler runs)"})
            # Growth: run time per step against the work it grows with (<= linear means ratio <= work ratio).
            for name, num, den, work in (("requests 8->32", (32, 512), (8, 512), 4.0),
                                         (f"context 512->{long}", (8, long), (8, 512), long / 512)):
                ratio = step_ms[num] / step_ms[den]
                table.append({"target": target, "growth": name, "ratio": ratio, "work": work})
    if args.table:
        print(f"{'target':<12} {'reqs':>4} {'context':>7} {'tasks':>6} {'plan ms':>8} {'run ms':>8} {'us/task':>8} "
              f"{'peak RSS MiB':>12} {'compiles':>8} {'first step ms':>13}")
        for r in table:
            if "growth" in r:
                verdict = "<= linear" if r["ratio"] <= r["work"] else "OVER linear"
                print(f"{r['target']:<12} growth {r['growth']}: run time x{r['ratio']:.2f} for x{r['work']:.0f} work "
                      f"({verdict})")
            else:
                print(f"{r['target']:<12} {r['requests']:>4} {r['context']:>7} {r['tasks']:>6} {r['plan_ms']:>8.2f} "
                      f"{r['run_ms']:>8.1f} {r['us_per_task']:>8.1f} {r['rss_mib']:>12.0f} {r['compiles']:>8} "
                      f"{r['first_ms']:>13.0f}")
        for b in bench:
            if b["name"].startswith("BM_LlmDecodeCompile"):
                print(f"{b['name']}: {b['real_time']:.0f} ms ({b['label']})")
    else:
        print(json.dumps({"benchmarks": bench}))


if __name__ == "__main__":
    main()
