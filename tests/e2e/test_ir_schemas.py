"""The IR contract documents of every example validate against their JSON Schemas (docs/schemas):
tile.kernels, wsp.task_graph, csp.graph and layout.signatures as the dialects publish them, for each example, target and entry
of examples/example_index.py. The module is dumped after tile.lower, which runs after the task graph and
the CSP graph are built and the layouts inferred and checked, so one dump holds all four."""
import importlib
import json
import os
import pathlib
import sys

import jsonschema
import pytest

import htp

EXAMPLES = pathlib.Path(os.environ["HTP_EXAMPLES"])
SCHEMAS = EXAMPLES.parent / "docs" / "schemas"
sys.path.insert(0, str(EXAMPLES))
import example_index  # noqa: E402

VALIDATORS = {}
for attribute, file in (("tile.kernels", "tile-kernels"), ("wsp.task_graph", "wsp-task-graph"),
                        ("csp.graph", "csp-graph"), ("layout.signatures", "layout-signatures")):
    schema = json.loads((SCHEMAS / f"{file}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    VALIDATORS[attribute] = jsonschema.Draft202012Validator(schema)

RUNS = example_index.runs(EXAMPLES)
SEEN = set()  # the attributes some example published


def published(tmp_path, example, target, entry):
    module = importlib.import_module(example)
    example_index.context_for(module).compile(getattr(module, entry), target=target, out=tmp_path / "pkg",
                                              dump_ir="tile.lower")
    (dump,) = [p for p in (tmp_path / "pkg" / "ir").glob("*_tile.lower.ast.json")]
    return json.loads(dump.read_text())["attrs"]


@pytest.mark.parametrize("example,target,entry", RUNS, ids=[f"{e}-{t}" for e, t, _ in RUNS])
def test_ir_documents_of_the_example_match_their_schemas(tmp_path, example, target, entry):
    attrs = published(tmp_path, example, target, entry)
    assert "tile.kernels" in attrs, f"{example} for {target} published no tile.kernels"
    problems = []
    for attribute, validator in VALIDATORS.items():
        if attribute not in attrs:
            continue
        SEEN.add(attribute)
        for error in validator.iter_errors(attrs[attribute]):
            path = "/".join(map(str, error.absolute_path))
            problems.append(f"{attribute} at /{path}: {error.message[:300]}")
    assert not problems, f"{example} for {target}:\n" + "\n".join(problems)


def test_the_examples_publish_every_document():
    if len(SEEN) == 0:
        pytest.skip("run with the per-example tests")
    assert SEEN == set(VALIDATORS), f"no example published {sorted(set(VALIDATORS) - SEEN)}"
