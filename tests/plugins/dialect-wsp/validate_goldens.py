#!/usr/bin/env python3
"""Validates every golden task graph of golden/ against docs/schemas/wsp-task-graph.schema.json.

Usage: validate_goldens.py SOURCE_DIR"""
import json
import pathlib
import sys

import jsonschema

src = pathlib.Path(sys.argv[1])
schema = json.loads((src / "docs" / "schemas" / "wsp-task-graph.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
goldens = sorted((src / "tests" / "plugins" / "dialect-wsp" / "golden").glob("*.json"))
if not goldens:
    sys.exit("no golden task graphs found")
failed = 0
for path in goldens:
    for error in validator.iter_errors(json.loads(path.read_text())):
        print(f"{path.name}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
        failed += 1
print(f"{len(goldens)} golden task graph(s) checked, {failed} error(s)")
sys.exit(1 if failed else 0)
