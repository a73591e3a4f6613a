"""The host AST over every .py file of the interpreter's standard library (see ast_stdlib_corpus.py)."""

from __future__ import annotations

import ast_stdlib_corpus


def test_stdlib_round_trips_through_the_cpp_host(capsys):
    report, seconds = ast_stdlib_corpus.run()
    with capsys.disabled():
        print(
            f"\nstdlib round trip: {report.files} files ({report.skipped} skipped: do not parse or decode), "
            f"{report.nodes} nodes, {seconds:.1f} s; printer == ast.unparse for "
            f"{report.unparse_identical}/{report.files} files"
        )
    assert report.files > 100
    assert report.failures == []
    assert report.json_identical == report.files, "the C++ dump equals _ast_json.dumps"
    assert report.unparse_identical == report.files
