// Bad input: every diagnostic of dialect-wsp with its message and span (file:line:col), and no package
// left behind. Each program starts with kPrelude, so the workload's first line is line 10.
#include <gtest/gtest.h>

#include "wsp_test_support.hpp"

namespace fs = std::filesystem;

namespace {

const char *kPrelude =
    R"(from htp.dialects.tile import kernel, Tensor, Scalar, In, Out, InOut, f32, i32, load, store, add
from htp.dialects.wsp import (workload, schedule, P, Ragged, Sparse, dispatch, affinity, round_robin, streams,
                              stream_by, buffer, tile, Dense)

@kernel
def add_tile(x: In[Tensor[32, 128, f32]], y: In[Tensor[32, 128, f32]], z: Out[Tensor[32, 128, f32]]):
    store(z, add(load(x), load(y)))


)";

class WspDiagnostics : public ::testing::Test {
protected:
  /// Compiles kPrelude + `body` and returns stderr; the compile must fail and leave no package.
  std::string errors_of(const std::string &body, const std::string &target = "check") {
    prog_ = dir_.write("bad.py", std::string(kPrelude) + body);
    fs::path out = dir_.path() / "pkg";
    auto r = wsp_test::compile(prog_, out, target);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
    return r.err;
  }
  /// `bad.py:line:col: error: ` as the host prints it (columns 1-based).
  std::string at(int line, int col) const {
    return prog_.string() + ":" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  }
  htp::test::ScratchDir dir_;
  fs::path prog_;
};

const char *kVadd = R"(@workload
def vadd(A: In[Tensor[1024, 1024, f32]], B: In[Tensor[1024, 1024, f32]], C: Out[Tensor[1024, 1024, f32]]):
    for i, j in P(32, 8):
)";

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

TEST_F(WspDiagnostics, KernelCalledWithTooFewArguments) {
  auto err = errors_of(std::string(kVadd) + "        add_tile[i, j](A.tile(i, j), B.tile(i, j))\n");
  EXPECT_HAS(err,
             at(13, 9) +
                 "kernel 'add_tile' takes 3 argument(s) (x, y, z), but 2 were given: missing z [wsp.arity]");
}

TEST_F(WspDiagnostics, KernelCalledWithTooManyArguments) {
  auto err = errors_of(std::string(kVadd) +
                       "        add_tile(A.tile(i, j), B.tile(i, j), C.tile(i, j), C.tile(i, j))\n");
  EXPECT_HAS(err,
             at(13, 9) + "kernel 'add_tile' takes 3 argument(s) (x, y, z), but 4 were given [wsp.arity]");
}

TEST_F(WspDiagnostics, KernelCalledWithAnUnknownKeyword) {
  auto err = errors_of(std::string(kVadd) + "        add_tile(A.tile(i, j), B.tile(i, j), w=C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 46) + "kernel 'add_tile' has no parameter 'w' (it has x, y, z) [wsp.argument]");
}

TEST_F(WspDiagnostics, MisShapedSliceIsNamedWithBothShapes) {
  auto err = errors_of(std::string(kVadd) + "        add_tile(A[0:16, 0:128], B.tile(i, j), C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 18) +
                      "parameter 'x' of kernel 'add_tile' is a [32, 128] tile, but the argument is a "
                      "[16, 128] view of 'A' [1024, 1024] [wsp.tile-shape]");
}

TEST_F(WspDiagnostics, TilesThatDoNotDivideTheTensor) {
  auto err = errors_of(R"(@workload
def vadd(A: In[Tensor[1000, 1024, f32]], B: In[Tensor[1024, 1024, f32]], C: Out[Tensor[1024, 1024, f32]]):
    for i, j in P(32, 8):
        add_tile(A.tile(i, j), B.tile(i, j), C.tile(i, j))
)");
  EXPECT_HAS(err, at(13, 18) + "tiles [32, 128] do not divide 'A' [1000, 1024]: dimension 0 (1000) is not a "
                               "multiple of 32 [wsp.tile-shape]");
}

TEST_F(WspDiagnostics, TileWithTheWrongNumberOfIndices) {
  auto err = errors_of(std::string(kVadd) + "        add_tile(A.tile(i), B.tile(i, j), C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 18) + "'A' is 2-D, so A.tile(...) takes 2 tile index(es), got 1 [wsp.tile-shape]");
}

TEST_F(WspDiagnostics, TileWithAShapeKeywordSaysTheParameterGivesTheShape) {
  // The tile dialect's A.tile(i, j, shape=...) written in a launch, as a reader of both docs writes it: the
  // parameter's own shape is accepted (tests/python/test_workload_dims.py); another names both (the hint was a
  // fixed example slice of 64 rows).
  auto err = errors_of(std::string(kVadd) + "        add_tile(A.tile(i, j, shape=(16, 128)), B.tile(i, j), C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 37) + "A.tile(...) of a launch moves the shape of the kernel parameter it binds, [32, 128], "
                               "not [16, 128]: drop shape=, or pass a slice of the shape the parameter takes "
                               "[wsp.tile-shape]");
  err = errors_of(std::string(kVadd) + "        add_tile(A.tile(i, j, rows=32), B.tile(i, j), C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 18) + "A.tile(...) of a launch moves the shape of the kernel parameter it binds, [32, 128]; "
                               "it takes tile indices and shape= only, got rows= [wsp.tile-shape]");
}

TEST_F(WspDiagnostics, ConstantViewOutOfBounds) {
  auto err =
      errors_of(std::string(kVadd) + "        add_tile(A[1000:1032, 0:128], B.tile(i, j), C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 18) +
                      "this view of 'A' [1024, 1024] covers [1000, 1032) in dimension 0, out of bounds "
                      "[wsp.tile-shape]");
}

TEST_F(WspDiagnostics, ViewPastTheEndOnTheLastIterationOfItsLoop) {
  auto err = errors_of(std::string(kVadd) + "        add_tile(A.tile(i + 1, j), B.tile(i, j), C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 18) +
                      "this view of 'A' [1024, 1024] covers [1024, 1056) in dimension 0 over i in [0, 31], out of "
                      "bounds [wsp.tile-shape]");
}

TEST_F(WspDiagnostics, ViewIndexedByTheWrongLoopVariableLeavesTheTensor) {
  auto err = errors_of(std::string(kVadd) + "        add_tile(A.tile(i, j), B.tile(i, i), C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 32) +
                      "this view of 'B' [1024, 1024] covers [3968, 4096) in dimension 1 over i in [0, 31], out of "
                      "bounds [wsp.tile-shape]");
}

TEST_F(WspDiagnostics, ViewBeforeTheStartOnTheFirstIterationOfItsLoop) {
  auto err = errors_of(std::string(kVadd) + "        add_tile(A.tile(i, j), B.tile(i, j - 1), C.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 32) +
                      "this view of 'B' [1024, 1024] covers [-128, 0) in dimension 1 over j in [0, 7], out of "
                      "bounds [wsp.tile-shape]");
}

TEST_F(WspDiagnostics, WritingAnInputTensor) {
  auto err = errors_of(std::string(kVadd) + "        add_tile(A.tile(i, j), B.tile(i, j), A.tile(i, j))\n");
  EXPECT_HAS(err, at(13, 46) + "kernel 'add_tile' writes its parameter 'z' (Out), but 'A' is an input of the "
                               "workload (In); declare it Out[...] or InOut[...] [wsp.direction]");
}

TEST_F(WspDiagnostics, DtypeMismatch) {
  auto err = errors_of(R"(@workload
def vadd(A: In[Tensor[1024, 1024, i32]], B: In[Tensor[1024, 1024, f32]], C: Out[Tensor[1024, 1024, f32]]):
    for i, j in P(32, 8):
        add_tile(A.tile(i, j), B.tile(i, j), C.tile(i, j))
)");
  EXPECT_HAS(err, at(13, 18) + "parameter 'x' of kernel 'add_tile' holds f32, but 'A' holds i32 [wsp.dtype]");
}

TEST_F(WspDiagnostics, TensorPassedForAScalar) {
  auto err = errors_of(R"(@kernel
def scale(x: InOut[Tensor[32, 128, f32]], n: Scalar[i32]):
    store(x, load(x))


@workload
def w(A: InOut[Tensor[1024, 1024, f32]]):
    for i in P(32):
        scale(A.tile(i, 0), A)
)");
  EXPECT_HAS(err,
             at(18, 29) + "parameter 'n' of kernel 'scale' is a scalar, but 'A' is a tensor [wsp.argument]");
}

TEST_F(WspDiagnostics, SeqOverARaggedAxisWithoutItsLengths) {
  auto err = errors_of(R"(@workload
def w(A: In[Tensor[1024, 1024, f32]], n: int):
    for b, j in P.seq(Ragged(n)):
        add_tile(A.tile(b, j), A.tile(b, j), A.tile(b, j))
)");
  EXPECT_HAS(err, at(12, 23) + "a Ragged axis needs its lengths: Ragged(n, lengths) names the integer tensor "
                               "holding the extent of each of its n rows [wsp.ragged-lengths]");
}

TEST_F(WspDiagnostics, RaggedLengthsMustBeAnIntegerVector) {
  auto err = errors_of(R"(@workload
def w(A: In[Tensor[1024, 1024, f32]], n: int):
    for b, j in P.seq(Ragged(n, A)):
        add_tile(A.tile(b, j), A.tile(b, j), A.tile(b, j))
)");
  EXPECT_HAS(err,
             at(12, 33) + "Ragged lengths 'A' must be a 1-D integer tensor, but it is 2-D f32 [wsp.axis]");
}

TEST_F(WspDiagnostics, LoopBindingTheWrongNumberOfVariables) {
  auto err = errors_of(R"(@workload
def w(A: In[Tensor[1024, 1024, f32]]):
    for i in P(32, 8):
        pass
)");
  EXPECT_HAS(err, at(12, 14) + "this loop binds 1 variable(s) but iterates 2 axis variable(s) [wsp.axis]");
}

TEST_F(WspDiagnostics, ScheduleNamingAnAxisTheWorkloadLacks) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    dispatch(affinity("h"))
)");
  EXPECT_HAS(err, at(18, 23) + "schedule 's' names axis 'h', but workload 'vadd' has the axes i, j "
                               "[wsp.schedule-axis]");
}

TEST_F(WspDiagnostics, ScheduleTilingAnAxisTheWorkloadLacks) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    tile("b", 2)
)");
  EXPECT_HAS(err,
             at(18, 10) +
                 "schedule 's' names axis 'b', but workload 'vadd' has the axes i, j [wsp.schedule-axis]");
}

TEST_F(WspDiagnostics, ScheduleDirectiveGivenTwice) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    streams(2)
    streams(4)
)");
  EXPECT_HAS(err, at(19, 5) + "directive 'streams' is given twice (first at line 18) [wsp.schedule]");
}

TEST_F(WspDiagnostics, DirectiveTheTargetCannotHonourIsRejectedAtTheDirective) {
  // check-strict accepts dispatch(round_robin) only: streams(2) is rejected by the resolver at its span.
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    dispatch(round_robin(4))
    streams(2)
)",
                "check-strict");
  EXPECT_HAS(err, at(19, 5));
  EXPECT_HAS(err, "Uses.Schedule(directive=streams)");
  EXPECT_HAS(err, "[resolve.unaccepted]");
  EXPECT_EQ(err.find(at(18, 5)), std::string::npos) << err; // round_robin is honoured
}

TEST_F(WspDiagnostics, DispatchPolicyTheTargetCannotHonour) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    dispatch(affinity("i"))
)",
                "check-strict");
  EXPECT_HAS(err, at(18, 5));
  EXPECT_HAS(err, "Uses.Schedule(directive=dispatch,policy=affinity)");
}

TEST_F(WspDiagnostics, WhileWithADataDependentCondition) {
  auto err = errors_of(R"(@workload
def w(A: In[Tensor[1024, 1024, f32]], L: In[Tensor[4, i32]]):
    while L[0] > 0:
        add_tile(A.tile(0, 0), A.tile(0, 0), A.tile(0, 0))
)");
  EXPECT_HAS(err, at(12, 5) +
                      "`while` is not accepted in a workload: its condition would be evaluated while the "
                      "tasks run");
  EXPECT_HAS(err, "[wsp.unsupported]");
}

TEST_F(WspDiagnostics, TryIsNotAccepted) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]]):
    try:
        add_tile(A.tile(0, 0), A.tile(0, 0), A.tile(0, 0))
    except Exception:
        pass
)");
  EXPECT_HAS(err, at(12, 5) +
                      "`try` is not accepted in a workload: a workload describes tasks, it runs no code "
                      "that could raise [wsp.unsupported]");
}

TEST_F(WspDiagnostics, EveryBadStatementIsReported) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]], L: In[Tensor[4, i32]]):
    while L[0] > 0:
        pass
    try:
        pass
    finally:
        pass
)");
  EXPECT_HAS(err, at(12, 5) + "`while`");
  EXPECT_HAS(err, at(14, 5) + "`try`");
}

TEST_F(WspDiagnostics, OtherwiseWithoutWhen) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]]):
    with P.otherwise():
        pass
)");
  EXPECT_HAS(err,
             at(12, 5) +
                 "`with P.otherwise():` must directly follow a `with P.when(pred):` block [wsp.unsupported]");
}

TEST_F(WspDiagnostics, TrueDivisionInAnExtent) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]], n: int):
    for i in P(n / 2):
        pass
)");
  EXPECT_HAS(err, at(12, 16) + "'/' is true division; workload expressions are integer: use '//' [wsp.expr]");
}

TEST_F(WspDiagnostics, ReadingAFloatTensorInAPredicate) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]]):
    for i in P(4):
        with P.when(A[i, 0] > 0):
            pass
)");
  EXPECT_HAS(err,
             at(13, 21) + "reading 'A' in an expression needs an integer tensor, but 'A' is f32 [wsp.expr]");
}

TEST_F(WspDiagnostics, ScheduleOfAFunctionThatIsNoWorkload) {
  auto err = errors_of(R"(@schedule(add_tile)
def s():
    streams(2)
)");
  EXPECT_HAS(err, at(10, 11) +
                      "@schedule(...) names a @workload function of this program; 'add_tile' is not one "
                      "[wsp.schedule]");
}

TEST_F(WspDiagnostics, SelOverSomethingThatIsNoSparseRow) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]], n: int):
    for e in P.sel(n):
        pass
)");
  EXPECT_HAS(err, at(12, 14) +
                      "P.sel iterates the selected indices of one row of a Sparse axis: P.sel(S[row]) or "
                      "P.sel(Sparse(n, indptr, indices), row) [wsp.unsupported]");
}

TEST_F(WspDiagnostics, SparseIndicesMustBeIntegerVectors) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]], ptr: In[Tensor[9, i32]], idx: In[Tensor[64, f32]]):
    routing = Sparse(8, ptr, idx)
    for t in P(8):
        for e in P.sel(routing[t]):
            pass
)");
  EXPECT_HAS(err,
             at(12, 30) + "Sparse indices 'idx' must be a 1-D integer tensor, but it is 1-D f32 [wsp.axis]");
}

TEST_F(WspDiagnostics, SliceWithARuntimeExtent) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]], n: int):
    add_tile(A[0:n, 0:128], A.tile(0, 0), A.tile(0, 0))
)");
  EXPECT_HAS(err, at(12, 16) +
                      "the extent of this slice of 'A' is not a compile-time constant; a kernel tile has a "
                      "static shape [wsp.tile-shape]");
}

TEST_F(WspDiagnostics, LaunchingASchedule) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    streams(2)


@workload
def outer(A: InOut[Tensor[1024, 1024, f32]]):
    s()
)");
  EXPECT_HAS(err, at(23, 5) + "'s' is a @wsp.schedule function, not a kernel: a workload launches @kernel "
                              "functions [wsp.call]");
}

TEST_F(WspDiagnostics, WorkloadsCannotRecurse) {
  auto err = errors_of(R"(@workload
def ping(A: InOut[Tensor[1024, 1024, f32]]):
    pong(A)


@workload
def pong(A: InOut[Tensor[1024, 1024, f32]]):
    ping(A)
)");
  EXPECT_HAS(err, at(17, 5) +
                      "workload 'ping' launches itself (ping -> pong -> ping); a task graph is finite, "
                      "so workloads cannot recurse [wsp.call]");
  EXPECT_HAS(err, at(12, 5) + "workload 'pong' launches itself (pong -> ping -> pong)");
}

TEST_F(WspDiagnostics, InlinedWorkloadWithAMismatchedTensor) {
  auto err = errors_of(R"(@workload
def inner(X: InOut[Tensor[1024, 1024, f32]], n: int):
    for i in P(n):
        add_tile(X.tile(i, 0), X.tile(i, 0), X.tile(i, 0))


@workload
def outer(A: InOut[Tensor[512, 1024, f32]], B: In[Tensor[1024, 1024, f32]]):
    inner(A, 4)
    inner(B, 4)
    inner(A)
)");
  EXPECT_HAS(err, at(18, 11) +
                      "parameter 'X' of workload 'inner' is f32 [1024,1024], but 'A' is f32 [512,1024] "
                      "[wsp.argument]");
  EXPECT_HAS(err, at(19, 11) +
                      "workload 'inner' writes its parameter 'X', but 'B' is an input of the caller (In) "
                      "[wsp.direction]");
  EXPECT_HAS(err, at(20, 5) + "workload 'inner' takes 2 argument(s) (X, n), but 1 were given: missing n "
                              "[wsp.arity]");
}

TEST_F(WspDiagnostics, InlinedLoopVariableCollidesWithTheCallersLoop) {
  auto err = errors_of(R"(@workload
def inner(X: InOut[Tensor[1024, 1024, f32]]):
    for i in P(4):
        add_tile(X.tile(i, 0), X.tile(i, 0), X.tile(i, 0))


@workload
def outer(A: InOut[Tensor[1024, 1024, f32]]):
    for i in P(2):
        inner(A)
)");
  EXPECT_HAS(err, at(12, 9) + "loop variable 'i' of the inlined workload 'inner' is also a variable of an "
                              "enclosing loop; rename one of them [wsp.axis]");
}

TEST_F(WspDiagnostics, CallingSomethingThatIsNoKernel) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]]):
    print(A)
)");
  EXPECT_HAS(err, at(12, 5) +
                      "a workload statement is a kernel launch such as `k[i](A.tile(i, 0), ...)`; a call "
                      "of 'print' is not a @kernel of this program [wsp.unsupported]");
}

TEST_F(WspDiagnostics, LoopVariableShadowingAParameter) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]], n: int):
    for n in P(4):
        pass
)");
  EXPECT_HAS(err, at(12, 9) + "loop variable 'n' shadows a name already bound in the workload [wsp.axis]");
}

TEST_F(WspDiagnostics, SecondScheduleForOneWorkload) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s1():
    streams(2)


@schedule(vadd)
def s2():
    streams(4)
)");
  EXPECT_HAS(err, at(21, 2) + "workload 'vadd' already has the schedule 's1'; a workload has one schedule "
                              "[wsp.schedule]");
}

TEST_F(WspDiagnostics, StreamByOverAnAxisTheWorkloadLacks) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    streams(2)
    stream_by(lambda h: h % 2)
)");
  EXPECT_HAS(err, at(19, 22) + "schedule 's' names axis 'h', but workload 'vadd' has the axes i, j "
                               "[wsp.schedule-axis]");
}

TEST_F(WspDiagnostics, BufferOfATensorTheWorkloadLacks) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    buffer("K", "L1")
)");
  EXPECT_HAS(err, at(18, 12) + "workload 'vadd' has no tensor 'K' [wsp.schedule]");
}

TEST_F(WspDiagnostics, MalformedDispatchPolicy) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    dispatch(round_robin())
)");
  EXPECT_HAS(err, at(18, 14) +
                      "a dispatch policy is round_robin(n), affinity(axis), hash(axis) or work_steal(); "
                      "got a call of 'round_robin' [wsp.schedule]");
}

TEST_F(WspDiagnostics, ScheduleStatementThatIsNoDirective) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    x = 4
)");
  EXPECT_HAS(err, at(18, 5) +
                      "a schedule body is a list of directives (dispatch, streams, stream_by, timing, tile, "
                      "pipeline, buffer, task_window); got an assignment [wsp.schedule]");
}

TEST_F(WspDiagnostics, DivisionByZeroInAnIndex) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]]):
    for i in P(4):
        add_tile(A.tile(i // 0, 0), A.tile(0, 0), A.tile(0, 0))
)");
  EXPECT_HAS(err, at(13, 25) + "division by zero in a workload expression [wsp.expr]");
}

TEST_F(WspDiagnostics, FloatIndexIntoATensor) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]]):
    add_tile(A.tile(1.5, 0), A.tile(0, 0), A.tile(0, 0))
)");
  EXPECT_HAS(err, at(12, 21) + "an index into a tensor is an integer, got 1.5 [wsp.expr]");
}

TEST_F(WspDiagnostics, AStrayConstantIsNoDocstring) {
  auto err =
      errors_of(std::string(kVadd) + R"(        add_tile[i, j](A.tile(i, j), B.tile(i, j), C.tile(i, j))


@schedule(vadd)
def s():
    """Docstrings are fine."""
    4
)");
  EXPECT_HAS(err, at(19, 5) +
                      "a schedule body is a list of directives (dispatch, streams, stream_by, timing, tile, "
                      "pipeline, buffer, task_window); got the constant 4 [wsp.schedule]");
}

TEST_F(WspDiagnostics, LetRebindingAParameter) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]], n: int):
    half = n // 2
    n = half
)");
  EXPECT_HAS(err, at(13, 5) + "'n' is a parameter or loop variable; bind the value to a new name [wsp.axis]");
}

TEST_F(WspDiagnostics, DenseNeedsACompileTimeExtent) {
  auto err = errors_of(R"(@workload
def w(A: InOut[Tensor[1024, 1024, f32]], n: int):
    for i in P(Dense[n]):
        pass
)");
  EXPECT_HAS(err, at(12, 16) +
                      "Dense[N] takes an extent known at compile time; use DenseDyn(n) for one known at "
                      "run time [wsp.axis]");
}

} // namespace
