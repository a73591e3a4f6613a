"""Bad input: a P(32) grid, larger than any NPU.

Until the dialect plugins land, the IR contract documents of this program come from the JSON fixture
below through the test plugin fixtures/ir_fixture.cpp.
"""
from htp.dialects.irfix import fixture, program


@program
def vadd():
    fixture("../fixtures/grid_32.json")
