"""The shared driver of the examples: compile an entry for a target, run it on the target's simulator
binding with seeded random inputs, and check every output against a NumPy reference.

    python examples/<example>.py [--target T] [--out DIR] [--cache DIR] [--list-targets]

Prints the max error per output, the package path, its file tree and where the run's trace is; exits 0
only when every output is within tolerance."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

import htp


def _tree(root: pathlib.Path) -> list[str]:
    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if rel.parts[0] in ("logs", "build"):
            continue
        lines.append(f"  {rel}  ({path.stat().st_size} bytes)")
    return lines


def run(entries: dict, make_inputs, reference, *, outputs: list[str], rtol: float = 1e-4, atol: float = 1e-4,
        description: str = "", argv=None, plugins=None, check_package=None, options=None) -> int:
    """``entries`` maps target -> captured entry function; ``make_inputs(rng)`` returns the arguments by
    name (NumPy arrays and numbers); ``reference(**inputs)`` returns the expected outputs by name.
    ``plugins`` are loaded into the Context besides the built-in ones (plugin files, Python extensions);
    ``check_package(ctx, pkg, target)`` may inspect the compiled package and returns False to fail;
    ``options`` are the compile's pass options."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--target", default=next(iter(entries)), choices=sorted(entries))
    parser.add_argument("--out", default=None, help="package directory (default: a temporary directory)")
    parser.add_argument("--cache", default=None, help="build cache (default: $HTP_CACHE_DIR or ~/.cache/htp)")
    parser.add_argument("--list-targets", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="no file tree")
    args = parser.parse_args(argv)
    if args.list_targets:
        print(" ".join(entries))
        return 0

    out = pathlib.Path(args.out) if args.out else pathlib.Path(tempfile.mkdtemp(prefix="htp-example-")) / "pkg"
    ctx = htp.Context(plugins)
    t0 = time.perf_counter()
    pkg = ctx.compile(entries[args.target], target=args.target, out=out, force=True,
                      dump_ir="all" if check_package else None, options=options)
    compile_ms = (time.perf_counter() - t0) * 1e3
    ok = check_package(ctx, pkg, args.target) if check_package else True
    inputs = make_inputs(np.random.default_rng(0))
    expected = reference(**{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()})
    t0 = time.perf_counter()
    result = htp.bind(pkg, ctx).run(cache_dir=args.cache, **inputs)
    run_ms = (time.perf_counter() - t0) * 1e3

    print(f"{pathlib.Path(sys.argv[0]).name}: target {args.target}, binding {result.binding}"
          f" ({(result.report or {}).get('path', '?')}), compile {compile_ms:.0f} ms, run {run_ms:.0f} ms")
    for name in outputs:
        got, want = result[name].astype(np.float64), np.asarray(expected[name], dtype=np.float64)
        err = float(np.max(np.abs(got - want))) if got.size else 0.0
        good = got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))
        ok = ok and good
        print(f"  {name}: max |error| vs NumPy = {err:.3g}  {'ok' if good else 'MISMATCH'}")
    print(f"  package {pkg.path}")
    if not args.quiet:
        print("\n".join(_tree(pkg.path)))
    trace = (result.report or {}).get("trace")
    if trace:
        print(f"  trace   {result.run_dir / trace} (open in https://ui.perfetto.dev)")
    print(f"  report  {result.run_dir / 'report.json'}")
    return 0 if ok else 1
