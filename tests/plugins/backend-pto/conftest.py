"""Fixtures of the backend-pto Python tests (this directory and sim/): a context over the built-in plugins
and a build cache shared by the tests of one module. Needs HTP_PLUGIN_DIR (set by ctest)."""
import os

import pytest

import htp


@pytest.fixture(scope="module")
def ctx():
    return htp.Context(plugins=[os.environ["HTP_PLUGIN_DIR"]], use_environment=False)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("ptosim-cache")
