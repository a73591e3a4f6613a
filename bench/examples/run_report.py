#!/usr/bin/env python3
"""What each example's package does on each simulator target: its first run in an empty build cache (cold:
every kernel compiled) and again (warm: no compiler), tasks (pto-a2a3sim) or cores, FIFOs and DMA descriptors
(aie-npu1; a host-orchestrated entry counts its task designs' and its tasks), and the simulator's run time
(median of REPEAT runs after a first one that builds the kernels). Also the overlap pipeline(2)
gives a sequential loop on pto-a2a3sim: the span of two consecutive iterations over the sum of their tasks'
times in the estimated device time (below 1: they overlap). Prints Google Benchmark JSON for bench/report.py.

    PYTHONPATH=build/python /usr/bin/python3 bench/examples/run_report.py [--repeat N] [--table]
"""
import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import textwrap
import time

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

PIPELINED = textwrap.dedent('''
    from htp.dialects.tile import kernel, Tensor, In, Out, InOut, f32, load, store, add, exp, muls
    from htp.dialects.wsp import workload, schedule, pipeline, P


    @kernel
    def produce(x: In[Tensor[16, 64, f32]], buf: Out[Tensor[16, 64, f32]]):
        store(buf, exp(muls(load(x), 0.5)))


    @kernel
    def consume(buf: In[Tensor[16, 64, f32]], acc: InOut[Tensor[16, 64, f32]]):
        store(acc, add(load(acc), load(buf)))


    @workload
    def scan(X: In[Tensor[128, 64, f32]], Y: InOut[Tensor[16, 64, f32]]):
        buf: Tensor[16, 64, f32]
        for k in P.seq(8):
            produce[k](X.tile(k, 0), buf)
            consume[k](buf, Y)


    @schedule(scan)
    def double_buffered():
        pipeline(2)
''')


def aie_counts(entry_dir: pathlib.Path):
    """(cores, FIFOs, DMA descriptors) of an entry's design(s): a spatial entry's, or the sum over a
    host-orchestrated entry's task designs."""
    designs = [entry_dir] if (entry_dir / "mapping.json").is_file() else sorted((entry_dir / "tasks").glob("*"))
    cores = fifos = descriptors = 0
    for d in designs:
        cores += len(json.loads((d / "mapping.json").read_text())["cores"])
        fifos += len(json.loads((d / "fifos.json").read_text())["fifos"])
        text = (d / "aie.mlir").read_text()
        descriptors += text.count("aiex.npu.dma_memcpy_nd") + text.count("aie.dma_bd(")
    return cores, fifos, descriptors


def pipeline_overlap(ctx, tmp):
    import importlib.util
    import numpy as np
    import htp
    path = pathlib.Path(tmp) / "pipelined.py"
    path.write_text(PIPELINED)
    spec = importlib.util.spec_from_file_location("pipelined", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pkg = ctx.compile(module.scan, target="pto-a2a3sim", out=pathlib.Path(tmp) / "pipelined-pkg", force=True)
    x = np.random.default_rng(0).standard_normal((128, 64)).astype(np.float32)
    r = htp.bind(pkg, ctx).run(X=x, Y=np.zeros((16, 64), np.float32))
    tasks = sorted(r.report["task_estimates"], key=lambda t: t["task"])
    ratios = []
    for k in range(4, len(tasks) - 2, 2):  # steady state: iterations 2 and on
        four = tasks[k:k + 4]
        span = max(t["start_ns"] + t["estimated_device_ns"] for t in four) - min(t["start_ns"] for t in four)
        ratios.append(span / sum(t["estimated_device_ns"] for t in four))
    return max(ratios)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--table", action="store_true", help="print a table instead of JSON")
    args = ap.parse_args()
    sys.path.insert(0, str(EXAMPLES))
    import numpy as np
    import example_index
    import htp

    ctx = htp.Context()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for module_name, target, fn, module, example_ctx in example_index.loaded_runs(EXAMPLES):
            if not hasattr(module, "make_inputs"):
                continue
            pkg = example_ctx.compile(fn, target=target, out=pathlib.Path(tmp) / f"{module_name}-{target}")
            inputs = module.make_inputs(np.random.default_rng(0))
            bound = htp.bind(pkg, example_ctx)
            # First runs: in an empty cache (every kernel compiled, the simulator headers precompiled), then
            # again in it (nothing compiled).
            with tempfile.TemporaryDirectory() as cache:
                for kind in ("cold", "warm"):
                    t0 = time.perf_counter()
                    first = bound.run(cache_dir=cache, **inputs)
                    build = first.report.get("build", first.report.get("kernels", {}))
                    out.append({"name": f"BM_FirstRun/{module_name}/{target}/{kind}", "run_type": "iteration",
                                "iterations": 1, "real_time": (time.perf_counter() - t0) * 1e3, "cpu_time": 0,
                                "time_unit": "ms", "compiler_runs": build.get("compiler_invocations", 0),
                                "label": f"compiler runs {build.get('compiler_invocations', 0)}"})
            runs = [bound.run(**inputs) for _ in range(args.repeat + 1)][1:]
            report = runs[-1].report
            counters = {}
            if target.startswith("pto"):
                counters["tasks"] = report["tasks"]
            else:
                cores, fifos, descriptors = aie_counts(pkg.path / "codegen/aie" / fn.__name__)
                counters.update(cores=cores, fifos=fifos, dma_descriptors=descriptors)
                if report.get("orchestrated"):
                    counters["tasks"] = report["tasks"]
            label = ", ".join(f"{k} {v}" for k, v in counters.items())
            out.append({"name": f"BM_ExampleRun/{module_name}/{target}", "run_type": "iteration",
                        "iterations": args.repeat, "real_time": statistics.median(r.report["run_seconds"] for r in runs) * 1e3,
                        "cpu_time": 0, "time_unit": "ms", "label": label, **counters})
        out.append({"name": "BM_PipelineOverlap/pto-a2a3sim", "run_type": "iteration", "iterations": 1,
                    "real_time": 0, "cpu_time": 0, "time_unit": "ms",
                    "span_over_sum": pipeline_overlap(ctx, tmp),
                    "label": "pipeline(2): span of two consecutive iterations / sum of their task times (estimate)"})
    if args.table:
        for b in out:
            print(f"{b['name']:<48} {b['real_time']:>9.3f} ms  {b.get('label', '')}"
                  + (f" {b['span_over_sum']:.2f}" if "span_over_sum" in b else ""))
    else:
        print(json.dumps({"benchmarks": out}))


if __name__ == "__main__":
    main()
