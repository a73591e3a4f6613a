"""C = A + B over a P(4) grid of AIE cores, two 16 x 64 tiles per core (a WSP workload).

Until the dialect plugins land, the IR contract documents of this program come from the JSON fixture
below through the test plugin fixtures/ir_fixture.cpp.
"""
from htp.dialects.irfix import fixture, program


@program
def vadd():
    fixture("../fixtures/vadd.json")
