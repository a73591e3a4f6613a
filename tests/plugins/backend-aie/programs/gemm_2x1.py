"""C = A @ B on @kernel(mapping=[2, 1]) with A @ S(0)R, B @ RS(1), C @ S(0)S(1).

Until the dialect plugins land, the IR contract documents of this program come from the JSON fixture
below through the test plugin fixtures/ir_fixture.cpp.
"""
from htp.dialects.irfix import fixture, program


@program
def gemm():
    fixture("../fixtures/gemm_2x1.json")
