#!/usr/bin/env python3
"""The estimated device time's two checks (docs/packages.md, "Estimated device time") as make bench rows, on
both simulator targets: a GEMM tile's estimate with its K doubled over the same tile with K, and a
memory-bound elementwise kernel's estimate with the bytes it moves doubled over the original, each on the
roofline part (the estimate minus the profile's fixed launch cost; target 2 within 2%). The programs are the
e2e test's (tests/e2e/estimate_programs.py), compiled and run through the Python API. Prints Google
Benchmark JSON for bench/report.py.

    PYTHONPATH=build/python /usr/bin/python3 bench/examples/estimates.py
"""
import importlib.util
import json
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(ctx, tmp, target, source, entry, inputs):
    """Compiles `source` (a module defining `entry`) for `target` and runs it on the simulator; returns its
    report.json."""
    import htp
    tmp.mkdir(parents=True)
    path = tmp / "prog.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"estimate_{tmp.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pkg = ctx.compile(getattr(module, entry), target=target, out=tmp / "pkg", force=True)
    return htp.bind(pkg, ctx).run(cache_dir=str(tmp.parent / "cache"), **inputs).report


def main():
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    import htp
    from estimate_programs import TARGETS, gemm_inputs, roofline_ns, vadd_inputs

    ctx = htp.Context()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for target in sorted(TARGETS):
            for check, name, inputs, what in (("gemm", "BM_EstimateGemmKDoubled", gemm_inputs, "K"),
                                              ("vadd", "BM_EstimateElementwiseBytesDoubled", vadd_inputs, "rows")):
                source, kernel, (a, b) = TARGETS[target][check]
                key = "k" if check == "gemm" else "rows"
                reports = [run(ctx, pathlib.Path(tmp) / target / f"{check}{v}", target, source.format(**{key: v}),
                               check, inputs(target, v)) for v in (a, b)]
                ns = [roofline_ns(r, kernel) for r in reports]
                work = [r["estimate"]["kernels"][kernel]["work"] for r in reports]
                bound = "/".join(r["estimate"]["kernels"][kernel]["bound"] for r in reports)
                label = (f"{kernel}, {what} {a} -> {b}: {ns[0]:.0f} -> {ns[1]:.0f} ns past launch ({bound} bound; "
                         + (f"matmul flops x{work[1]['matmul_flops'] / work[0]['matmul_flops']:g})" if check == "gemm"
                            else f"bytes loaded x{work[1]['bytes_loaded'] / work[0]['bytes_loaded']:g})"))
                out.append({"name": f"{name}/{target}", "run_type": "iteration", "iterations": 1, "real_time": 0,
                            "cpu_time": 0, "time_unit": "ms", "ratio": ns[1] / ns[0], "label": label})
    print(json.dumps({"benchmarks": out}))


if __name__ == "__main__":
    main()
