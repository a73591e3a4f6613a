"""Fixtures the e2e tests that write their program as a string share."""
import importlib.util

import pytest

import htp


@pytest.fixture(scope="module")
def program(request, tmp_path_factory):
    """The test module's PROGRAM, written to `<PROGRAM_NAME>.py` and imported: capture reads the functions'
    source, so the program has to be a file (the name shows in the spans of messages)."""
    name = request.module.PROGRAM_NAME
    path = tmp_path_factory.mktemp("prog") / f"{name}.py"
    path.write_text(request.module.PROGRAM)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ctx():
    return htp.Context()
