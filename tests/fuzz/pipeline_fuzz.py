#!/usr/bin/env python3
"""Whole-pipeline fuzzer: mutates the example programs at the Python AST level and compiles every mutant
for both simulator targets with htp-host, in bounded time and memory.

The oracle, for every (mutant, target): htp-host exits 0, or exits 1 with at least one diagnostic located in
the mutant (`mutant.py:LINE:COL: error: ...`). Never: a signal, a timeout, a blow-up past the memory limit, a
Python traceback, an uncaught exception, an error without a location, or a package (or its temporary)
left behind by a failed compile.

    pipeline_fuzz.py --host build/bin/htp-host --count 150 --seed 1          # a run (what ctest does)
    pipeline_fuzz.py --host ... --time 3600 --seed 7 --save tests/fuzz/corpus/pipeline   # a long run
    pipeline_fuzz.py --host ... --replay tests/fuzz/corpus/pipeline          # the corpus of reproducers

Mutations: integer constants (0, ±1, negatives, 2**31, 2**62, 2**63 - 1, 10**30, off-by-one), float
constants, dtypes, intrinsic names, loop extents, view indices (i -> i + 1, a second loop variable),
deleted and duplicated statements. A failing mutant is printed and, with --save, written to the corpus with
a header naming its mutation, target and outcome."""
from __future__ import annotations

import argparse
import ast
import copy
import os
import pathlib
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TARGETS = ["pto-a2a3sim", "aie-npu1"]
TIME_LIMIT_S = 30
ADDRESS_SPACE = 4 << 30
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "") or "ASAN_OPTIONS" in os.environ

INTS = [0, 1, -1, -7, 2, 3, 17, 127, 2**31, 2**62, 2**63 - 1, 10**30]
FLOATS = [0.0, -1.0, 1e-30, 1e30, float("inf"), float("nan")]
DTYPES = ["f32", "f16", "bf16", "i32", "i8", "u8", "f64", "i64", "bool"]
INTRINSICS = ["add", "sub", "mul", "div", "exp", "matmul", "rowsum", "rowmax", "load", "store", "muls", "adds",
              "relu", "sqrt", "rsqrt", "colsum", "rowexpand_mul", "neg", "max", "min"]


def _limits():
    if not SANITIZED:  # ASan reserves terabytes of address space; its build runs without this limit
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


# --------------------------------------------------------------------------------------------- mutation


class Mutator:
    """One random AST mutation of a module; `describe` says what it did."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.describe = ""

    def mutate(self, tree: ast.Module) -> ast.Module | None:
        tree = copy.deepcopy(tree)
        kinds = [self.int_constant, self.int_constant, self.int_constant, self.float_constant, self.dtype,
                 self.intrinsic, self.view_index, self.loop_extent, self.delete_statement, self.duplicate_statement]
        for _ in range(8):  # some kinds find nothing to change in some programs
            if self.rng.choice(kinds)(tree):
                ast.fix_missing_locations(tree)
                return tree
        return None

    def _pick(self, nodes):
        return self.rng.choice(nodes) if nodes else None

    def int_constant(self, tree) -> bool:
        n = self._pick([x for x in ast.walk(tree) if isinstance(x, ast.Constant) and type(x.value) is int])
        if n is None:
            return False
        new = self.rng.choice(INTS + [n.value + 1, n.value - 1, n.value * 2, -n.value])
        self.describe = f"line {n.lineno}: int {n.value} -> {new}"
        n.value = new
        return True

    def float_constant(self, tree) -> bool:
        n = self._pick([x for x in ast.walk(tree) if isinstance(x, ast.Constant) and type(x.value) is float])
        if n is None:
            return False
        new = self.rng.choice(FLOATS)
        self.describe = f"line {n.lineno}: float {n.value} -> {new}"
        n.value = new
        return True

    def dtype(self, tree) -> bool:
        n = self._pick([x for x in ast.walk(tree) if isinstance(x, ast.Name) and x.id in DTYPES])
        if n is None:
            return False
        new = self.rng.choice([d for d in DTYPES if d != n.id])
        self.describe = f"line {n.lineno}: dtype {n.id} -> {new}"
        n.id = new
        return True

    def intrinsic(self, tree) -> bool:
        calls = [x for x in ast.walk(tree) if isinstance(x, ast.Call) and isinstance(x.func, ast.Name)
                 and x.func.id in INTRINSICS]
        n = self._pick(calls)
        if n is None:
            return False
        new = self.rng.choice([i for i in INTRINSICS if i != n.func.id])
        self.describe = f"line {n.lineno}: call {n.func.id} -> {new}"
        n.func.id = new
        return True

    def view_index(self, tree) -> bool:
        views = [x for x in ast.walk(tree) if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute)
                 and x.func.attr == "tile" and x.args]
        n = self._pick(views)
        if n is None:
            return False
        k = self.rng.randrange(len(n.args))
        names = sorted({x.id for x in ast.walk(n) if isinstance(x, ast.Name) and len(x.id) == 1})
        choice = self.rng.randrange(3)
        old = ast.unparse(n.args[k])
        if choice == 0:
            n.args[k] = ast.BinOp(n.args[k], ast.Add(), ast.Constant(1))
        elif choice == 1 and names:
            n.args[k] = ast.Name(self.rng.choice(names), ast.Load())
        else:
            n.args[k] = ast.BinOp(n.args[k], ast.Sub(), ast.Constant(1))
        self.describe = f"line {n.lineno}: view index {old} -> {ast.unparse(n.args[k])}"
        return True

    def loop_extent(self, tree) -> bool:
        loops = [x for x in ast.walk(tree) if isinstance(x, ast.For) and isinstance(x.iter, ast.Call) and x.iter.args]
        n = self._pick(loops)
        if n is None:
            return False
        k = self.rng.randrange(len(n.iter.args))
        old = ast.unparse(n.iter.args[k])
        new = self.rng.choice([ast.Constant(self.rng.choice(INTS)),
                               ast.BinOp(n.iter.args[k], ast.Mult(), ast.Constant(self.rng.choice([2, 1000, 2**31])))])
        n.iter.args[k] = new
        self.describe = f"line {n.lineno}: loop extent {old} -> {ast.unparse(new)}"
        return True

    def _bodies(self, tree):
        return [x for x in ast.walk(tree) if isinstance(x, (ast.FunctionDef, ast.For, ast.With)) and len(x.body) > 1]

    def delete_statement(self, tree) -> bool:
        owner = self._pick(self._bodies(tree))
        if owner is None:
            return False
        i = self.rng.randrange(len(owner.body))
        self.describe = f"line {owner.body[i].lineno}: deleted `{ast.unparse(owner.body[i]).splitlines()[0]}`"
        del owner.body[i]
        return True

    def duplicate_statement(self, tree) -> bool:
        owner = self._pick(self._bodies(tree) + [x for x in ast.walk(tree) if isinstance(x, ast.FunctionDef)])
        if owner is None:
            return False
        i = self.rng.randrange(len(owner.body))
        self.describe = f"line {owner.body[i].lineno}: duplicated `{ast.unparse(owner.body[i]).splitlines()[0]}`"
        owner.body.insert(i, copy.deepcopy(owner.body[i]))
        return True


# --------------------------------------------------------------------------------------------- oracle


def compile_once(host: str, program: pathlib.Path, target: str, work: pathlib.Path) -> tuple[str, str, float]:
    """Compiles `program` for `target`; returns (verdict, detail, seconds). verdict is 'ok', 'diagnosed' or
    the name of an oracle violation."""
    out = work / f"pkg-{target}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]))
    t0 = time.perf_counter()
    try:
        r = subprocess.run([host, "compile", str(program), "--target", target, "-o", str(out)], capture_output=True,
                           text=True, timeout=TIME_LIMIT_S, preexec_fn=_limits, env=env, cwd=work)
    except subprocess.TimeoutExpired:
        return "timeout", f"no answer within {TIME_LIMIT_S} s", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    err = r.stderr
    leftovers = [p.name for p in work.iterdir() if p.name.startswith(".pkg-") or "htp-tmp" in p.name]
    if r.returncode < 0:
        return "signal", f"killed by signal {-r.returncode}\n{err[-2000:]}", seconds
    if "Traceback (most recent call last)" in err:
        return "traceback", err[-3000:], seconds
    if "uncaught exception" in err or "plugin.exception" in err or "std::bad_alloc" in err:
        return "exception", err[-2000:], seconds
    if leftovers:
        return "leftover", f"left {leftovers}", seconds
    if r.returncode == 0:
        shutil.rmtree(out, ignore_errors=True)
        return "ok", "", seconds
    if out.exists():
        return "partial-package", f"exit {r.returncode} but {out} exists", seconds
    if r.returncode != 1:
        return "exit-code", f"exit {r.returncode}\n{err[-2000:]}", seconds
    located = re.compile(re.escape(str(program)) + r":\d+:\d+: error: ")
    if not located.search(err):
        return "unlocated", err[-2000:], seconds
    return "diagnosed", "", seconds


VIOLATIONS = {"timeout", "signal", "traceback", "exception", "leftover", "partial-package", "exit-code", "unlocated"}


def examples() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        text = path.read_text()
        if "\nENTRIES = " in text:
            out.append((path.stem, ast.parse(text, filename=str(path))))
    return out


def check(host: str, program: pathlib.Path, work: pathlib.Path, stats: dict, failures: list, label: str,
          source: str, mutation: str, save: pathlib.Path | None):
    for target in TARGETS:
        verdict, detail, seconds = compile_once(host, program, target, work)
        stats[verdict] = stats.get(verdict, 0) + 1
        stats["seconds"] = max(stats.get("seconds", 0.0), seconds)
        if verdict in VIOLATIONS:
            failures.append((label, target, verdict, mutation, detail))
            print(f"FAIL {label} [{target}] {verdict}: {mutation}\n{detail}\n", flush=True)
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                name = re.sub(r"[^a-z0-9]+", "_", f"{label}_{target}_{verdict}".lower())
                header = f"# pipeline_fuzz reproducer: {mutation}\n# target {target}: {verdict}\n"
                (save / f"{name}.py").write_text(header + source)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", required=True, help="the htp-host binary")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100, help="mutants (each compiled for both targets)")
    ap.add_argument("--time", type=float, default=0, help="stop after this many seconds (0: no limit)")
    ap.add_argument("--replay", type=pathlib.Path, help="compile every .py of this directory instead of mutants")
    ap.add_argument("--save", type=pathlib.Path, help="write each failing mutant here as a reproducer")
    args = ap.parse_args(argv)
    stats: dict = {}
    failures: list = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="htp-pipeline-fuzz-") as tmp:
        work = pathlib.Path(tmp)
        if args.replay:
            files = sorted(args.replay.glob("*.py"))
            for f in files:
                program = work / "mutant.py"
                program.write_text(f.read_text())
                check(args.host, program, work, stats, failures, f.stem, f.read_text(), f"corpus {f.name}", None)
            print(f"pipeline corpus: {len(files)} reproducers x {len(TARGETS)} targets: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(stats.items()) if k != "seconds"))
        else:
            rng = random.Random(args.seed)
            sources = examples()
            mutants = 0
            while mutants < args.count and not (args.time and time.perf_counter() - start > args.time):
                name, tree = rng.choice(sources)
                m = Mutator(rng)
                mutant = m.mutate(tree)
                if mutant is None:
                    continue
                mutants += 1
                source = ast.unparse(mutant) + "\n"
                program = work / "mutant.py"
                program.write_text(source)
                check(args.host, program, work, stats, failures, f"{name}_{mutants}", source, f"{name}: {m.describe}",
                      args.save)
            print(f"pipeline fuzz (seed {args.seed}): {mutants} mutants x {len(TARGETS)} targets in "
                  f"{time.perf_counter() - start:.0f} s: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(stats.items()) if k != "seconds")
                  + f"; slowest compile {stats.get('seconds', 0):.2f} s")
    for label, target, verdict, mutation, _ in failures:
        print(f"  violation: {label} [{target}] {verdict}: {mutation}")
    print(f"{sum(v for k, v in stats.items() if k in ('ok', 'diagnosed'))} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
