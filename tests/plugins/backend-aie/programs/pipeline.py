"""A CSP three-stage pipeline: loader -> c1 -> square(x + 1) -> c2 -> storer.

Until the dialect plugins land, the IR contract documents of this program come from the JSON fixture
below through the test plugin fixtures/ir_fixture.cpp.
"""
from htp.dialects.irfix import fixture, program


@program
def pipeline():
    fixture("../fixtures/pipeline.json")
