"""The standard-library round trip of the host AST, shared by its pytest test and its command line.

For every .py file of the interpreter's standard library: Python ast -> htp.ast.v1 JSON -> C++ tree ->
JSON -> Python ast must equal the original (ast.dump with attributes), and the C++ printer's source
must parse back to an equal tree (ast.dump without attributes) and, where practical, read exactly as
ast.unparse writes it. Files are checked in batches across worker processes.
"""

from __future__ import annotations

import ast
import gc
import json
import os
import sysconfig
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from htp import _htp
from htp._ast_json import dumps, from_json, to_json


def stdlib_files() -> list[str]:
    root = sysconfig.get_paths()["stdlib"]
    files = []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".py")]
    return files


@dataclass
class Report:
    files: int = 0
    skipped: int = 0
    nodes: int = 0
    json_identical: int = 0
    unparse_identical: int = 0
    failures: list = field(default_factory=list)

    def add(self, other: "Report") -> None:
        self.files += other.files
        self.skipped += other.skipped
        self.nodes += other.nodes
        self.json_identical += other.json_identical
        self.unparse_identical += other.unparse_identical
        self.failures += other.failures


def _parse(source: bytes, path: str):
    try:
        plain = ast.parse(source, path)
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return None, None
    try:
        typed = ast.parse(source, path, type_comments=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        typed = plain  # a misplaced type comment: check the file without type comments
    return plain, typed


def check_files(paths: list[str], compare_unparse: bool = True) -> Report:
    """Checks one batch of files in this process."""
    # Trees hold no reference cycles; the cyclic collector would only rescan them, again and again
    # (it takes three quarters of the time when left on).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _check_files(paths, compare_unparse)
    finally:
        if was_enabled:
            gc.enable()


def _check_files(paths: list[str], compare_unparse: bool) -> Report:
    report = Report()
    parsed = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                source = f.read()
        except OSError:
            report.skipped += 1
            continue
        plain, typed = _parse(source, path)
        if plain is None:
            report.skipped += 1
            continue
        parsed.append((path, plain, typed, dumps(to_json(typed, path))))
    results = _htp.ast_json_batch([p[3] for p in parsed], dump=True, unparse=True)
    for (path, plain, typed, sent), (dumped, printed, count) in zip(parsed, results):
        report.files += 1
        report.nodes += count
        report.json_identical += dumped == sent
        back = from_json(json.loads(dumped))
        if ast.dump(back, include_attributes=True) != ast.dump(typed, include_attributes=True):
            report.failures.append((path, "JSON round trip changed the tree"))
            continue
        try:
            reparsed = ast.parse(printed, path)
        except SyntaxError as e:
            report.failures.append((path, f"printed source does not parse: {e}"))
            continue
        if ast.dump(reparsed) != ast.dump(plain):
            report.failures.append((path, "printed source parses to a different tree"))
            continue
        if compare_unparse:
            report.unparse_identical += printed == ast.unparse(typed)
    return report


def run(workers: int | None = None, batch: int = 24, compare_unparse: bool = True) -> tuple[Report, float]:
    """Checks the whole standard library; returns the report and the seconds it took."""
    start = time.perf_counter()
    files = stdlib_files()
    batches = [files[i : i + batch] for i in range(0, len(files), batch)]
    report = Report()
    workers = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for r in pool.map(check_files, batches, [compare_unparse] * len(batches)):
            report.add(r)
    return report, time.perf_counter() - start


if __name__ == "__main__":
    r, seconds = run()
    print(
        f"{r.files} files ({r.skipped} skipped), {r.nodes} nodes in {seconds:.1f} s; "
        f"JSON byte-identical {r.json_identical}/{r.files}; printer == ast.unparse {r.unparse_identical}/{r.files}; "
        f"{len(r.failures)} failures"
    )
    for path, why in r.failures[:20]:
        print(f"  {path}: {why}")
