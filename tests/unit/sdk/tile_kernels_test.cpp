// The SDK's typed tile.kernels (htp/tile_kernels.hpp): what dialect-tile writes reads and writes back
// unchanged, every missing required key and wrong type is an error naming its JSON pointer, and another
// major version is rejected.
#include <htp/tile_kernels.hpp>
#include <htp/kernel_entry.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

fs::path tile_golden_dir() { return fs::path(HTP_TEST_SOURCE_DIR) / "tests/plugins/dialect-tile/golden"; }

json tile_golden(const std::string &name) {
  std::ifstream in(tile_golden_dir() / (name + ".tile.kernels.json"));
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

/// The error reading `doc` throws (fails the test when it reads).
htp::IrDocumentError tile_error_of(const json &doc) {
  try {
    (void)htp::read_tile_kernels(doc);
  } catch (const htp::IrDocumentError &e) {
    return e;
  }
  ADD_FAILURE() << "read without an error: " << doc.dump().substr(0, 200);
  return htp::IrDocumentError(htp::IrDocumentError::Kind::Malformed, "", "", "");
}

/// A kernel in the key order dialect-tile writes (ordered_json keeps it); the expressions and operands
/// inside statements are nlohmann::json in the typed form, so their keys are sorted here.
ojson ordered_kernel_doc() {
  return ojson::parse(R"({"schema": "htp.tile.kernels.v1", "kernels": [
    {"name": "k", "kind": "kernel", "span": {"file": "k.py", "line": 3, "col": 0, "end_line": 9, "end_col": 20},
     "mapping": [2, 1],
     "params": [{"name": "x", "dir": "in", "type": {"kind": "tensor", "shape": [64, 32], "dtype": "f32"},
                 "local_shape": [32, 32]},
                {"name": "n", "dir": "in", "type": {"kind": "scalar", "dtype": "i32"}},
                {"name": "T", "dir": "in", "type": {"kind": "constexpr", "value": null}}],
     "locals": [{"name": "a", "kind": "tile", "shape": [32, 32], "dtype": "f32"},
                {"name": "s", "kind": "scalar", "dtype": "i64"}],
     "body": [
       {"op": "full", "dst": "a", "value": 0.0, "span": {"file": "k.py", "line": 4, "col": 4, "end_line": 4, "end_col": 9}},
       {"op": "for", "var": "i", "start": 0, "stop": {"param": "n"}, "step": 1, "body": [
         {"op": "load", "dst": "a", "src": "x", "offset": [{"args": [{"var": "i"}, 32], "op": "mul"}, 0]},
         {"op": "adds", "dst": "a", "args": ["a"], "scalar": 0.5, "set": "pto"},
         {"op": "if", "cond": {"args": [{"var": "i"}, 2], "op": "lt"}, "then": [
           {"op": "scalar", "dst": "s", "value": {"index": [{"var": "i"}], "read": "idx"}}], "else": []}]},
       {"op": "matmul", "dst": "a", "args": ["a", "a"], "accumulate": true},
       {"op": "csp.send", "args": ["a", {"offset": [0, 0], "shape": [32, 32], "tensor": "x"}, 3],
        "attrs": {"channel": "c1"}},
       {"op": "store", "dst": "x", "offset": [0, 0], "value": "a"}]}]})");
}

TEST(TileKernels, EveryDialectGoldenRoundTrips) {
  size_t n = 0;
  for (const auto &entry : fs::directory_iterator(tile_golden_dir())) {
    const std::string file = entry.path().filename().string();
    const json doc = tile_golden(file.substr(0, file.find('.')));
    const htp::TileKernels typed = htp::read_tile_kernels(doc);
    EXPECT_EQ(json(typed), doc) << file;
    EXPECT_EQ(htp::read_tile_kernels(json(typed)), typed) << file;
    ++n;
  }
  EXPECT_GE(n, 5u);
}

TEST(TileKernels, WritesTheKeysInTheOrderDialectTileDoes) {
  const ojson doc = ordered_kernel_doc();
  EXPECT_EQ(ojson(htp::read_tile_kernels(doc)).dump(), doc.dump());
}

TEST(TileKernels, ReadsTheTypedStructure) {
  const htp::TileKernels d = htp::read_tile_kernels(ordered_kernel_doc());
  ASSERT_EQ(d.kernels.size(), 1u);
  const htp::TileKernel &k = d.kernels[0];
  EXPECT_EQ(k.name, "k");
  EXPECT_EQ(k.span, (htp::IrSpan{"k.py", 3, 0, 9, 20}));
  EXPECT_EQ(k.mapping, (std::vector<int64_t>{2, 1}));
  ASSERT_NE(k.param("x"), nullptr);
  EXPECT_EQ(k.param("x")->body_shape(), (std::vector<int64_t>{32, 32}));
  EXPECT_EQ(k.param("x")->type.shape, (std::vector<int64_t>{64, 32}));
  EXPECT_TRUE(k.param("n")->type.is_scalar());
  EXPECT_TRUE(k.param("T")->type.value.is_null());
  EXPECT_TRUE(k.local("s")->is_scalar());
  const htp::TileOp &loop = k.body[1];
  EXPECT_EQ(loop.var, "i");
  EXPECT_EQ(*loop.stop, json({{"param", "n"}}));
  EXPECT_EQ(loop.body[1].set, "pto");
  EXPECT_EQ(loop.body[2].then_body[0].op, "scalar");
  EXPECT_EQ(k.body[3].arg_name(0), "a");
  EXPECT_EQ(k.body[3].arg_name(1), std::nullopt);
  size_t ops = 0;
  htp::for_each_op(k.body, [&](const htp::TileOp &) { ++ops; });
  EXPECT_EQ(ops, 9u);
  EXPECT_EQ(json(ordered_kernel_doc()).get<htp::TileKernels>(), d);
}

TEST(TileKernels, EachMissingRequiredKeyIsAnErrorAtItsPath) {
  const json doc = tile_golden("features");  // has loads, stores, loops, a branch, scalars, fills, constexprs
  for (const std::string pointer :
       {"/schema", "/kernels", "/kernels/0/name", "/kernels/0/kind", "/kernels/0/span", "/kernels/0/span/line",
        "/kernels/0/span/col", "/kernels/0/span/end_line", "/kernels/0/span/end_col", "/kernels/0/mapping",
        "/kernels/0/params", "/kernels/0/locals", "/kernels/0/body", "/kernels/0/params/0/name",
        "/kernels/0/params/0/dir", "/kernels/0/params/0/type", "/kernels/0/params/0/type/kind",
        "/kernels/0/params/0/type/shape", "/kernels/0/params/0/type/dtype", "/kernels/0/params/3/type/dtype",
        "/kernels/0/params/4/type/value", "/kernels/0/locals/0/name", "/kernels/0/locals/0/shape",
        "/kernels/0/locals/0/dtype", "/kernels/0/body/0/op", "/kernels/0/body/0/dst", "/kernels/0/body/0/value",
        "/kernels/0/body/1/var", "/kernels/0/body/1/start", "/kernels/0/body/1/stop", "/kernels/0/body/1/step",
        "/kernels/0/body/1/body", "/kernels/0/body/1/body/0/dst", "/kernels/0/body/1/body/0/src",
        "/kernels/0/body/1/body/0/offset", "/kernels/0/body/5/dst", "/kernels/0/body/5/value",
        "/kernels/0/body/6/body/1/cond", "/kernels/0/body/6/body/1/then", "/kernels/0/body/12/dst",
        "/kernels/0/body/12/offset", "/kernels/0/body/12/value"}) {
    json bad = doc;
    const json::json_pointer p(pointer);
    ASSERT_TRUE(bad.contains(p)) << pointer;
    bad[p.parent_pointer()].erase(p.back());
    const htp::IrDocumentError e = tile_error_of(bad);
    EXPECT_EQ(e.path(), pointer);
    EXPECT_EQ(e.kind(), htp::IrDocumentError::Kind::Malformed) << pointer;
    EXPECT_NE(e.reason().find("required key is missing"), std::string::npos) << pointer << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("malformed tile.kernels at " + pointer + ": ", 0), 0u) << e.what();
  }
}

TEST(TileKernels, OptionalKeysMayBeAbsent) {
  json doc = tile_golden("features");
  doc["kernels"][0]["params"][0].erase("local_shape");
  doc["kernels"][0]["locals"][0].erase("kind");
  doc["kernels"][0]["body"][0].erase("span");
  doc["kernels"][0]["span"].erase("file");
  doc["kernels"][0]["body"][6]["body"][1].erase("else");
  doc["kernels"][0]["unknown"] = "a later minor revision may add keys";
  const htp::TileKernels d = htp::read_tile_kernels(doc);
  const htp::TileKernel &k = d.kernels[0];
  EXPECT_EQ(k.params[0].local_shape, std::nullopt);
  EXPECT_EQ(k.params[0].body_shape(), (std::vector<int64_t>{4, 32, 64}));
  EXPECT_EQ(k.locals[0].kind, "tile");
  EXPECT_EQ(k.body[0].span, std::nullopt);
  EXPECT_EQ(k.span.file, std::nullopt);
  EXPECT_EQ(k.span.source_span("prog.py").file, "prog.py");
  EXPECT_TRUE(k.body[6].body[1].else_body.empty());
}

TEST(TileKernels, AWrongTypeOrRangeIsAnErrorAtItsPath) {
  const json doc = tile_golden("features");
  struct Case {
    std::string pointer;
    json value;
    std::string path, reason;
  };
  for (const Case &c : std::vector<Case>{
           {"/kernels", json::object(), "/kernels", "expected an array, found an object"},
           {"/kernels/0/name", 3, "/kernels/0/name", "expected a string, found 3"},
           {"/kernels/0/name", "", "/kernels/0/name", "expected a non-empty name"},
           {"/kernels/0/mapping", {2, 0}, "/kernels/0/mapping/1", "expected an integer >= 1, found 0"},
           {"/kernels/0/span/line", -1, "/kernels/0/span/line", "expected an integer >= 0, found -1"},
           {"/kernels/0/params/0/dir", "both", "/kernels/0/params/0/dir",
            "expected one of in, out, inout, found \"both\""},
           {"/kernels/0/params/0/type/kind", "view", "/kernels/0/params/0/type/kind",
            "expected one of tensor, tile, scalar, constexpr, found \"view\""},
           {"/kernels/0/params/0/type/shape", json::array(), "/kernels/0/params/0/type/shape",
            "expected at least 1 dimension"},
           {"/kernels/0/params/0/type/dtype", "f64", "/kernels/0/params/0/type/dtype",
            "expected one of f16, bf16, f32, i8, i16, i32, i64, u8, found \"f64\""},
           {"/kernels/0/params/0/local_shape", {4, 32}, "/kernels/0/params/0/local_shape",
            "has 2 dimensions, the tensor 3"},
           {"/kernels/0/locals/0/shape", {32}, "/kernels/0/locals/0/shape", "a tile has two dimensions"},
           {"/kernels/0/body/1/body/0/offset/0", {{"vars", "b"}}, "/kernels/0/body/1/body/0/offset/0",
            "expected an expression object with one of the keys var, param, read, op"},
           {"/kernels/0/body/1/body/0/offset/0", "b", "/kernels/0/body/1/body/0/offset/0",
            "expected an expression (a number, true/false, or an object with var, param, read or op), found \"b\""},
           {"/kernels/0/body/6/body/1/cond/args", 1, "/kernels/0/body/6/body/1/cond/args",
            "expected an array, found 1"},
           {"/kernels/0/body/2/args", "acc", "/kernels/0/body/2/args", "expected an array, found \"acc\""},
           {"/kernels/0/body/2/set", 1, "/kernels/0/body/2/set", "expected a string, found 1"},
           {"/kernels/0/body/12/value", 0, "/kernels/0/body/12/value", "expected a string, found 0"},
       }) {
    json bad = doc;
    bad[json::json_pointer(c.pointer)] = c.value;
    const htp::IrDocumentError e = tile_error_of(bad);
    EXPECT_EQ(e.path(), c.path) << c.pointer;
    EXPECT_EQ(e.reason(), c.reason) << c.pointer;
  }
}

TEST(TileKernels, ParametersAndRegistersHaveDistinctNames) {
  // One namespace: the emitted kernel functions declare them side by side (a pass that cut a kernel into
  // parts once declared a hand-off tensor twice, and backend-aie's kernel source did not compile).
  json doc = tile_golden("features");
  json &k = doc["kernels"][0];
  k["params"].push_back(k["params"][0]);
  htp::IrDocumentError e = tile_error_of(doc);
  EXPECT_EQ(e.path(), "/kernels/0/params/" + std::to_string(k["params"].size() - 1) + "/name");
  EXPECT_EQ(e.reason(), "a second parameter named '" + k["params"][0]["name"].get<std::string>() + "'");
  doc = tile_golden("features");
  json &k2 = doc["kernels"][0];
  json clash = k2["locals"][0];
  clash["name"] = k2["params"][0]["name"];
  k2["locals"].push_back(clash);
  e = tile_error_of(doc);
  EXPECT_EQ(e.path(), "/kernels/0/locals/" + std::to_string(k2["locals"].size() - 1) + "/name");
}

TEST(TileKernels, AnErrorCarriesTheSpanOfTheStatementAroundIt) {
  json doc = tile_golden("features");
  doc["kernels"][0]["body"][1]["body"][0]["offset"][0] = nullptr;
  const htp::IrDocumentError e = tile_error_of(doc);
  ASSERT_TRUE(e.span());
  EXPECT_EQ(e.span()->line, 14u);  // the load's span, not the loop's
  doc = tile_golden("features");
  doc["kernels"][0]["params"][0]["dir"] = "up";
  ASSERT_TRUE(tile_error_of(doc).span());
  EXPECT_EQ(tile_error_of(doc).span()->line, doc["kernels"][0]["span"]["line"].get<uint32_t>());
}

TEST(TileKernels, AnotherMajorVersionIsRejected) {
  json doc = tile_golden("vadd");
  doc["schema"] = "htp.tile.kernels.v2";
  htp::IrDocumentError e = tile_error_of(doc);
  EXPECT_EQ(e.kind(), htp::IrDocumentError::Kind::Version);
  EXPECT_EQ(e.path(), "/schema");
  EXPECT_STREQ(e.what(), "tile.kernels has schema \"htp.tile.kernels.v2\"; this reader reads htp.tile.kernels.v1 and "
                         "its minor revisions (htp.tile.kernels.v1.N)");
  for (const char *other : {"htp.tile.kernels.v10", "htp.tile.kernels.v1.", "htp.tile.kernels.v1.x", "htp.wsp.task_graph.v1"}) {
    doc["schema"] = other;
    EXPECT_EQ(tile_error_of(doc).kind(), htp::IrDocumentError::Kind::Version) << other;
  }
  doc["schema"] = 1;
  EXPECT_EQ(tile_error_of(doc).kind(), htp::IrDocumentError::Kind::Version);
  doc["schema"] = "htp.tile.kernels.v1.3";
  EXPECT_EQ(htp::read_tile_kernels(doc).schema, "htp.tile.kernels.v1.3");
}

TEST(TileKernels, ADocumentThatIsNotAnObjectIsMalformed) {
  const htp::IrDocumentError e = tile_error_of(json::array());
  EXPECT_EQ(e.path(), "");
  EXPECT_STREQ(e.what(), "malformed tile.kernels: expected an object, found an array");
}

}  // namespace

/// A process iteration reading back what it stored: the kernel of `body` (statements as JSON) with tensor Y
/// [32, 32] and registers a, b (8 x 32) and c (16 x 32).
htp::TileKernel iteration_kernel(const char *body) {
  return htp::read_tile_kernels(json::parse(std::string(R"({"schema": "htp.tile.kernels.v1", "kernels": [
    {"name": "p", "kind": "kernel", "span": {"file": "p.py", "line": 1, "col": 0, "end_line": 9, "end_col": 0}, "mapping": null,
     "params": [{"name": "Y", "dir": "inout", "type": {"kind": "tensor", "shape": [32, 32], "dtype": "f32"}}],
     "locals": [{"name": "a", "kind": "tile", "shape": [8, 32], "dtype": "f32"},
                {"name": "b", "kind": "tile", "shape": [8, 32], "dtype": "f32"},
                {"name": "c", "kind": "tile", "shape": [16, 32], "dtype": "f32"}],
     "body": )") + body + "}]}")).kernels.at(0);
}

TEST(TileKernels, ALoadOfTheViewJustStoredReadsTheStoredRegister) {
  auto forwarded = [](const char *body) {
    htp::TileKernel k = iteration_kernel(body);
    htp::forward_views_to_loads(k.body, k);
    std::vector<std::string> ops;
    htp::for_each_op(k.body, [&](const htp::TileOp &o) { ops.push_back(o.op); });
    return ops;
  };
  using V = std::vector<std::string>;
  // The same view: the load becomes a copy of the stored register.
  EXPECT_EQ(forwarded(R"([{"op": "store", "dst": "Y", "offset": [8, 0], "value": "a"},
                          {"op": "load", "dst": "b", "src": "Y", "offset": [8, 0]}])"), (V{"store", "copy"}));
  // Another view, another shape, a later store in between of another view, a redefined register: kept.
  EXPECT_EQ(forwarded(R"([{"op": "store", "dst": "Y", "offset": [8, 0], "value": "a"},
                          {"op": "load", "dst": "b", "src": "Y", "offset": [0, 0]}])"), (V{"store", "load"}));
  EXPECT_EQ(forwarded(R"([{"op": "store", "dst": "Y", "offset": [0, 0], "value": "a"},
                          {"op": "load", "dst": "c", "src": "Y", "offset": [0, 0]}])"), (V{"store", "load"}));
  EXPECT_EQ(forwarded(R"([{"op": "store", "dst": "Y", "offset": [0, 0], "value": "a"},
                          {"op": "store", "dst": "Y", "offset": [8, 0], "value": "b"},
                          {"op": "load", "dst": "b", "src": "Y", "offset": [0, 0]}])"), (V{"store", "store", "load"}));
  EXPECT_EQ(forwarded(R"([{"op": "store", "dst": "Y", "offset": [0, 0], "value": "a"},
                          {"op": "exp", "dst": "a", "args": ["a"]},
                          {"op": "load", "dst": "b", "src": "Y", "offset": [0, 0]}])"), (V{"store", "exp", "load"}));
  // A view loaded twice is moved once, unless a store to the tensor comes between.
  EXPECT_EQ(forwarded(R"([{"op": "load", "dst": "a", "src": "Y", "offset": [8, 0]},
                          {"op": "load", "dst": "b", "src": "Y", "offset": [8, 0]}])"), (V{"load", "copy"}));
  EXPECT_EQ(forwarded(R"([{"op": "load", "dst": "a", "src": "Y", "offset": [8, 0]},
                          {"op": "store", "dst": "Y", "offset": [0, 0], "value": "b"},
                          {"op": "load", "dst": "b", "src": "Y", "offset": [8, 0]}])"), (V{"load", "store", "load"}));
  // A store a later store of the same view overwrites, nothing reading it between, is dropped.
  EXPECT_EQ(forwarded(R"([{"op": "store", "dst": "Y", "offset": [8, 0], "value": "a"},
                          {"op": "store", "dst": "Y", "offset": [8, 0], "value": "b"}])"), (V{"store"}));
  EXPECT_EQ(forwarded(R"([{"op": "store", "dst": "Y", "offset": [8, 0], "value": "a"},
                          {"op": "load", "dst": "c", "src": "Y", "offset": [0, 0]},
                          {"op": "store", "dst": "Y", "offset": [8, 0], "value": "b"}])"), (V{"store", "load", "store"}));
  // Not across a receive after a send: the steps of a round trip are kernel calls of their own.
  EXPECT_EQ(forwarded(R"([{"op": "load", "dst": "a", "src": "Y", "offset": [8, 0]},
                          {"op": "csp.send", "args": ["a"], "attrs": {"channel": "req"}},
                          {"op": "csp.recv", "dst": "c", "attrs": {"channel": "rep"}},
                          {"op": "load", "dst": "b", "src": "Y", "offset": [8, 0]}])"),
            (V{"load", "csp.send", "csp.recv", "load"}));
  // Inside a loop body, per iteration; a store nested in a branch leaves the view unknown.
  EXPECT_EQ(forwarded(R"([{"op": "for", "var": "i", "start": 0, "stop": 4, "step": 1, "body": [
                            {"op": "store", "dst": "Y", "offset": [{"op": "mul", "args": [{"var": "i"}, 8]}, 0], "value": "a"},
                            {"op": "load", "dst": "b", "src": "Y", "offset": [{"op": "mul", "args": [{"var": "i"}, 8]}, 0]}]}])"),
            (V{"for", "store", "copy"}));
  EXPECT_EQ(forwarded(R"([{"op": "store", "dst": "Y", "offset": [0, 0], "value": "a"},
                          {"op": "if", "cond": 1, "then": [{"op": "store", "dst": "Y", "offset": [0, 0], "value": "b"}], "else": []},
                          {"op": "load", "dst": "b", "src": "Y", "offset": [0, 0]}])"), (V{"store", "if", "store", "load"}));
}

/// A kernel accumulating four column blocks of X [16, 64] into acc [16, 16], then storing acc * 2.
htp::TileKernel accumulating_kernel(const char *loop_stop) {
  return htp::read_tile_kernels(json::parse(std::string(R"({"schema": "htp.tile.kernels.v1", "kernels": [
    {"name": "k", "kind": "kernel", "span": {"file": "k.py", "line": 1, "col": 0, "end_line": 9, "end_col": 0},
     "mapping": null,
     "params": [{"name": "X", "dir": "in", "type": {"kind": "tensor", "shape": [16, 64], "dtype": "f32"}},
                {"name": "Y", "dir": "out", "type": {"kind": "tensor", "shape": [16, 16], "dtype": "f32"}}],
     "locals": [{"name": "acc", "kind": "tile", "shape": [16, 16], "dtype": "f32"},
                {"name": "t", "kind": "tile", "shape": [16, 16], "dtype": "f32"}],
     "body": [{"op": "full", "dst": "acc", "value": 0.0},
              {"op": "for", "var": "j", "start": 0, "stop": )") + loop_stop + R"(, "step": 1, "body": [
                {"op": "load", "dst": "t", "src": "X", "offset": [0, {"op": "mul", "args": [{"var": "j"}, 16]}]},
                {"op": "add", "dst": "acc", "args": ["acc", "t"]}]},
              {"op": "muls", "dst": "t", "args": ["acc"], "scalar": 2.0},
              {"op": "store", "dst": "Y", "offset": [0, 0], "value": "t"}]}]})")).kernels.at(0);
}

TEST(KernelEntry, ALoopCarryingTilesRunsAsPartsWithTheCarriesInTensors) {
  std::string why;
  auto cl = htp::entry_parts_workload(accumulating_kernel("4"), &why);
  ASSERT_TRUE(cl) << why;
  ASSERT_EQ(cl->kernels.size(), 3u);
  EXPECT_EQ(cl->kernels[0].name, "k__0");
  EXPECT_EQ(cl->kernels[1].name, "k__1__iter");
  EXPECT_EQ(cl->kernels[2].name, "k__2");
  // The carry: stored by the part before the loop, loaded and stored by each iteration, loaded after it.
  ASSERT_EQ(cl->workload.intermediates.size(), 1u);
  EXPECT_EQ(cl->workload.intermediates[0].name, "carry_acc");
  EXPECT_EQ(cl->kernels[0].param("carry_acc")->dir, "out");
  EXPECT_EQ(cl->kernels[1].param("carry_acc")->dir, "inout");
  EXPECT_EQ(cl->kernels[2].param("carry_acc")->dir, "in");
  EXPECT_EQ(cl->kernels[1].body.front().op, "load");
  EXPECT_EQ(cl->kernels[1].body.back().op, "store");
  // Each part takes the kernel's parameters it uses; the iteration its view of X (a column block).
  EXPECT_EQ(cl->kernels[0].param("X"), nullptr);
  ASSERT_NE(cl->kernels[1].param("X"), nullptr);
  EXPECT_EQ(cl->kernels[1].param("X")->type.shape, (std::vector<int64_t>{16, 16}));
  EXPECT_NE(cl->kernels[2].param("Y"), nullptr);
  // The workload: the part before, four sequential iterations, the part after.
  const htp::WspNode &grid = cl->workload.body.at(0);
  ASSERT_EQ(grid.body.size(), 3u);
  EXPECT_EQ(grid.body[0].kernel, "k__0");
  EXPECT_EQ(grid.body[1].domain.extent, json(4));
  const htp::WspNode &iter = grid.body[1].body.at(0);
  EXPECT_EQ(iter.kernel, "k__1__iter");
  EXPECT_NE(std::find(iter.writes.begin(), iter.writes.end(), "carry_acc"), iter.writes.end());
  EXPECT_NE(std::find(iter.reads.begin(), iter.reads.end(), "carry_acc"), iter.reads.end());
  EXPECT_EQ(grid.body[2].kernel, "k__2");
  // A loop of runtime extent is not cut this way.
  EXPECT_FALSE(htp::entry_parts_workload(accumulating_kernel(R"({"param": "n"})"), &why));
  EXPECT_NE(why.find("not static"), std::string::npos) << why;
}

TEST(KernelEntry, AProcessWithStatementsAroundItsLoopIsCutIntoKernelsCarryingTheAccumulator) {
  std::string why;
  htp::TileKernel process = accumulating_kernel(R"({"param": "n"})");  // (a runtime bound is the backends' concern)
  process.kind = "process";
  auto cut = htp::cut_process(process, &why);
  ASSERT_TRUE(cut) << why;
  ASSERT_TRUE(cut->before && cut->after);
  EXPECT_EQ(cut->before->name, "k__before");
  EXPECT_EQ(cut->iteration.name, "k");
  EXPECT_EQ(cut->after->name, "k__after");
  EXPECT_EQ(cut->iteration.kind, "process");
  ASSERT_EQ(cut->carries.size(), 1u);
  EXPECT_EQ(cut->carries[0].name, "carry_acc");
  EXPECT_EQ(cut->carries[0].type.shape, (std::vector<int64_t>{16, 16}));
  // Set up before, loaded and stored by each iteration (inside the loop, which stays whole), read after.
  EXPECT_EQ(cut->before->param("carry_acc")->dir, "out");
  EXPECT_EQ(cut->iteration.param("carry_acc")->dir, "inout");
  EXPECT_EQ(cut->after->param("carry_acc")->dir, "in");
  ASSERT_EQ(cut->iteration.body.size(), 1u);
  const htp::TileOp &loop = cut->iteration.body[0];
  EXPECT_EQ(loop.op, "for");
  EXPECT_EQ(loop.body.front().op, "load");
  EXPECT_EQ(loop.body.back().op, "store");
  EXPECT_EQ(cut->after->body.front().op, "load");
  EXPECT_NE(cut->after->param("Y"), nullptr);
  EXPECT_EQ(cut->after->param("X"), nullptr);
  // One loop carrying nothing, or straight-line code, needs no cut (and says nothing).
  htp::TileKernel plain = process;
  plain.body = {process.body[1]};
  plain.body[0].body = {plain.body[0].body[0]};
  EXPECT_FALSE(htp::cut_process(plain, &why));
  EXPECT_EQ(why, "");
  plain.body = {process.body[0], process.body[3]};
  EXPECT_FALSE(htp::cut_process(plain, &why));
  EXPECT_EQ(why, "");
  // Two loops, or a register read before anything defines it, are named.
  plain.body = {process.body[0], process.body[1], process.body[1], process.body[3]};
  EXPECT_FALSE(htp::cut_process(plain, &why));
  EXPECT_EQ(why, "its body has 2 loops; a process runs one");
  plain.body = {process.body[1], process.body[3]};
  EXPECT_FALSE(htp::cut_process(plain, &why));
  EXPECT_EQ(why, "register 'acc' is read before it is defined");
}

TEST(KernelEntry, RegisterInputsCountAnAccumulatorAndNotAK_LoopsOwnTiles) {
  htp::TileKernel k = accumulating_kernel("4");
  std::set<std::string> inputs, defs;
  htp::register_inputs(k.body[1].body, k, inputs, defs);  // the loop body alone: acc comes from before it
  EXPECT_EQ(inputs, (std::set<std::string>{"acc"}));
  inputs.clear();
  defs.clear();
  htp::register_inputs(k.body, k, inputs, defs);  // the whole body: t is the loop's own, acc defined first
  EXPECT_TRUE(inputs.empty());
  // A register one branch of an `if` defines is defined on some paths only (`maybe`), not read.
  htp::TileOp branch;
  branch.op = "if";
  branch.cond = json(1);
  htp::TileOp fill;
  fill.op = "full";
  fill.dst = "t";
  fill.value = json(0.0);
  branch.then_body = {fill};
  inputs.clear();
  defs.clear();
  std::set<std::string> maybe;
  htp::register_inputs({branch}, k, inputs, defs, &maybe);
  EXPECT_TRUE(inputs.empty());
  EXPECT_EQ(maybe, (std::set<std::string>{"t"}));
  EXPECT_EQ(defs, (std::set<std::string>{"t"}));
  // A matmul accumulating into its destination reads it.
  htp::TileOp mm;
  mm.op = "matmul";
  mm.dst = "acc";
  mm.args = std::vector<json>{"t", "t"};
  mm.accumulate = true;
  std::set<std::string> uses;
  defs.clear();
  htp::registers_of(mm, k, uses, defs);
  EXPECT_EQ(uses, (std::set<std::string>{"acc", "t"}));
}

TEST(KernelEntry, APerfectNestOfLoopsIsTheWorkloadsLoopsAndAnInnerLoopStaysInTheIteration) {
  // for i in range(2): for j in range(3): acc = 0; for k in range(4): acc += A[i*8, k*8] @ B[k*8, j*8];
  // C[i*8, j*8] = acc
  const htp::TileKernel k = htp::read_tile_kernels(json::parse(R"({"schema": "htp.tile.kernels.v1", "kernels": [
    {"name": "g", "kind": "kernel", "span": {"file": "g.py", "line": 1, "col": 0, "end_line": 9, "end_col": 0},
     "mapping": null,
     "params": [{"name": "A", "dir": "in", "type": {"kind": "tensor", "shape": [16, 32], "dtype": "f32"}},
                {"name": "B", "dir": "in", "type": {"kind": "tensor", "shape": [32, 24], "dtype": "f32"}},
                {"name": "C", "dir": "out", "type": {"kind": "tensor", "shape": [16, 24], "dtype": "f32"}}],
     "locals": [{"name": "acc", "kind": "tile", "shape": [8, 8], "dtype": "f32"},
                {"name": "a", "kind": "tile", "shape": [8, 8], "dtype": "f32"},
                {"name": "b", "kind": "tile", "shape": [8, 8], "dtype": "f32"}],
     "body": [{"op": "for", "var": "i", "start": 0, "stop": 2, "step": 1, "body": [
       {"op": "for", "var": "j", "start": 0, "stop": 3, "step": 1, "body": [
         {"op": "full", "dst": "acc", "value": 0.0},
         {"op": "for", "var": "k", "start": 0, "stop": 4, "step": 1, "body": [
           {"op": "load", "dst": "a", "src": "A", "offset": [{"op": "mul", "args": [{"var": "i"}, 8]},
                                                             {"op": "mul", "args": [{"var": "k"}, 8]}]},
           {"op": "load", "dst": "b", "src": "B", "offset": [{"op": "mul", "args": [{"var": "k"}, 8]},
                                                             {"op": "mul", "args": [{"var": "j"}, 8]}]},
           {"op": "matmul", "dst": "acc", "args": ["a", "b"], "accumulate": true}]},
         {"op": "store", "dst": "C", "offset": [{"op": "mul", "args": [{"var": "i"}, 8]},
                                                {"op": "mul", "args": [{"var": "j"}, 8]}], "value": "acc"}]}]}]}]})"))
                                  .kernels.at(0);
  std::string why;
  auto lw = htp::loop_workload(k, &why);
  ASSERT_TRUE(lw) << why;
  EXPECT_EQ(lw->trips, 6);
  const htp::WspNode &outer = lw->workload.body.at(0).body.at(0);
  ASSERT_EQ(outer.domain.extent, json(2));
  const htp::WspNode &inner = outer.body.at(0);
  ASSERT_EQ(inner.domain.extent, json(3));
  const htp::WspNode &task = inner.body.at(0);
  // The iteration's views: A's rows of block i, all of K; B's columns of block j; C's block (i, j).
  std::map<std::string, const htp::WspArg *> args;
  for (const htp::WspArg &a : task.args) args[a.param] = &a;
  EXPECT_EQ(args["A"]->shape, (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(args["B"]->shape, (std::vector<int64_t>{32, 8}));
  EXPECT_EQ(args["C"]->shape, (std::vector<int64_t>{8, 8}));
  htp::ExprEnv env;
  env.vars = {{"i", 1}, {"i1", 2}};
  EXPECT_EQ(htp::eval_int(args["A"]->offset[0], env), 8);
  EXPECT_EQ(htp::eval_int(args["B"]->offset[1], env), 16);
  EXPECT_EQ(htp::eval_int(args["C"]->offset[1], env), 16);
  // Inside, the K-loop reads its block of the view: A at (0, k * 8), B at (k * 8, 0).
  const htp::TileOp &kloop = lw->body.body.at(1);
  env.vars = {{"k", 3}};
  EXPECT_EQ(htp::eval_int(kloop.body.at(0).offset->at(1), env), 24);
  EXPECT_EQ(htp::eval_int(kloop.body.at(0).offset->at(0), env), 0);
  EXPECT_EQ(htp::eval_int(kloop.body.at(1).offset->at(0), env), 24);
  EXPECT_EQ(htp::eval_int(kloop.body.at(1).offset->at(1), env), 0);
  EXPECT_EQ(lw->body.body.at(2).offset, (std::vector<json>{0, 0}));
}

TEST(KernelEntry, AnOffsetThroughAScalarRegisterOfTheLoopVariableReadsItsExpression) {
  // for i in range(4): r = 2 * i + 1; t = load(X[r * 8, 0]); if i > 1: s = r; s += 1; store(Y[s * 8, 0], t);
  // u = 3; u = i; store(Y[u * 8, 0], t)  — r is assigned once from i (inlined); s and u are assigned twice.
  htp::TileKernel k = htp::read_tile_kernels(json::parse(R"({"schema": "htp.tile.kernels.v1", "kernels": [
    {"name": "g", "kind": "kernel", "span": {"file": "g.py", "line": 1, "col": 0, "end_line": 9, "end_col": 0},
     "mapping": null,
     "params": [{"name": "X", "dir": "in", "type": {"kind": "tensor", "shape": [64, 8], "dtype": "f32"}},
                {"name": "Y", "dir": "out", "type": {"kind": "tensor", "shape": [64, 8], "dtype": "f32"}}],
     "locals": [{"name": "t", "kind": "tile", "shape": [8, 8], "dtype": "f32"},
                {"name": "r", "kind": "scalar", "shape": [], "dtype": "i32"},
                {"name": "s", "kind": "scalar", "shape": [], "dtype": "i32"},
                {"name": "u", "kind": "scalar", "shape": [], "dtype": "i32"}],
     "body": [{"op": "for", "var": "i", "start": 0, "stop": 4, "step": 1, "body": [
       {"op": "scalar", "dst": "r", "value": {"op": "add", "args": [{"op": "mul", "args": [2, {"var": "i"}]}, 1]}},
       {"op": "load", "dst": "t", "src": "X", "offset": [{"op": "mul", "args": [{"var": "r"}, 8]}, 0]},
       {"op": "if", "cond": {"op": "gt", "args": [{"var": "i"}, 1]}, "then": [
         {"op": "scalar", "dst": "s", "value": {"var": "r"}},
         {"op": "scalar", "dst": "s", "value": {"op": "add", "args": [{"var": "s"}, 1]}},
         {"op": "store", "dst": "Y", "offset": [{"op": "mul", "args": [{"var": "s"}, 8]}, 0], "value": "t"}],
        "else": [
         {"op": "store", "dst": "Y", "offset": [{"op": "mul", "args": [{"var": "r"}, 8]}, 0], "value": "t"}]},
       {"op": "scalar", "dst": "u", "value": 3},
       {"op": "scalar", "dst": "u", "value": {"var": "i"}},
       {"op": "store", "dst": "Y", "offset": [{"op": "mul", "args": [{"var": "u"}, 8]}, 0], "value": "t"}]}]}]})"))
                          .kernels.at(0);
  htp::inline_scalar_offsets(k);
  const std::vector<htp::TileOp> &body = k.body.at(0).body;
  htp::ExprEnv env;
  env.vars = {{"i", 2}};
  EXPECT_EQ(htp::eval_int(body.at(1).offset->at(0), env), 40);  // (2 * 2 + 1) * 8, r no longer read
  EXPECT_FALSE(htp::loop_detail::mentions(json(*body.at(1).offset), "r"));
  EXPECT_FALSE(htp::loop_detail::mentions(json(*body.at(2).else_body.at(0).offset), "r"));
  // s and u are assigned twice: their reads stay.
  EXPECT_TRUE(htp::loop_detail::mentions(json(*body.at(2).then_body.at(2).offset), "s"));
  EXPECT_TRUE(htp::loop_detail::mentions(json(*body.at(5).offset), "u"));
  // The scalar statements stay, for the registers' other uses.
  EXPECT_TRUE(body.at(0).is("scalar"));
  // A loop over such offsets is a loop workload.
  k.body.at(0).body = {body.at(0), body.at(1), body.at(2).else_body.at(0)};
  std::string why;
  EXPECT_TRUE(htp::loop_workload(k, &why)) << why;
}

TEST(KernelEntry, AnOffsetThroughARegisterOfAVariableTwoLoopsBindStaysARead) {
  // for i in range(2): r = 2 * i; for i in range(3): load(X[r * 8, 0]) — the inner loop rebinds i, r keeps the
  // outer value: substituting 2 * i there would read the inner i.
  htp::TileKernel k = htp::read_tile_kernels(json::parse(R"({"schema": "htp.tile.kernels.v1", "kernels": [
    {"name": "g", "kind": "kernel", "span": {"file": "g.py", "line": 1, "col": 0, "end_line": 9, "end_col": 0},
     "mapping": null,
     "params": [{"name": "X", "dir": "in", "type": {"kind": "tensor", "shape": [64, 8], "dtype": "f32"}},
                {"name": "Y", "dir": "out", "type": {"kind": "tensor", "shape": [8, 8], "dtype": "f32"}}],
     "locals": [{"name": "t", "kind": "tile", "shape": [8, 8], "dtype": "f32"},
                {"name": "r", "kind": "scalar", "shape": [], "dtype": "i32"}],
     "body": [{"op": "for", "var": "i", "start": 0, "stop": 2, "step": 1, "body": [
       {"op": "scalar", "dst": "r", "value": {"op": "mul", "args": [2, {"var": "i"}]}},
       {"op": "for", "var": "i", "start": 0, "stop": 3, "step": 1, "body": [
         {"op": "load", "dst": "t", "src": "X", "offset": [{"op": "mul", "args": [{"var": "r"}, 8]}, 0]},
         {"op": "store", "dst": "Y", "offset": [0, 0], "value": "t"}]}]}]}]})"))
                          .kernels.at(0);
  htp::inline_scalar_offsets(k);
  EXPECT_TRUE(htp::loop_detail::mentions(json(*k.body.at(0).body.at(1).body.at(0).offset), "r"));
}

// htp::split_loop_at_conditions: a loop cut where a branch its iteration number decides changes, when a
// branch moves a view that leaves the tensor at some iteration (backend-aie streams each part's own tiles).
namespace split {
// `for i in range(4)` over the 8-row tiles of Y (32 rows), with statement `branch` and then `rest` in its
// body.
std::string loop(const std::string &branch, const std::string &rest = "") {
  return R"({"op": "for", "var": "i", "start": 0, "stop": 4, "step": 1, "body": [
      {"op": "load", "dst": "a", "src": "Y", "offset": [{"op": "mul", "args": [{"var": "i"}, 8]}, 0]}, )" +
         branch +
         R"(, {"op": "store", "dst": "Y", "offset": [{"op": "mul", "args": [{"var": "i"}, 8]}, 0], "value": "b"})" +
         (rest.empty() ? "" : ", " + rest) + "]}";
}
// `if <cond>: b = a else: b = load(Y.tile(i - 1))`: the previous tile, before Y at i = 0.
std::string previous_under(const std::string &cond) {
  return R"({"op": "if", "cond": )" + cond + R"(, "then": [{"op": "copy", "dst": "b", "args": ["a"]}],
      "else": [{"op": "load", "dst": "b", "src": "Y", "offset": [{"op": "mul", "args": [{"op": "sub", "args": [{"var": "i"}, 1]}, 8]}, 0]}]})";
}
const std::string at_zero = R"({"op": "eq", "args": [{"var": "i"}, 0]})";
const std::string even = R"({"op": "eq", "args": [{"op": "mod", "args": [{"var": "i"}, 2]}, 0]})";
// Per loop of `k`: "start..stop: <the ops of its body>".
std::vector<std::string> shape(const htp::TileKernel &k) {
  std::vector<std::string> out;
  for (const htp::TileOp &l : k.body) {
    std::string ops;
    for (const htp::TileOp &o : l.body)
      ops += o.op + " ";
    out.push_back(l.start->dump() + ".." + l.stop->dump() + ": " + ops);
  }
  return out;
}
} // namespace split

TEST(TileKernels, ALoopIsCutWhereABranchOfItsIterationNumberChanges) {
  using V = std::vector<std::string>;
  auto cut = [](const std::string &cond) {
    return htp::split_loop_at_conditions(
        iteration_kernel(("[" + split::loop(split::previous_under(cond)) + "]").c_str()));
  };
  auto first = cut(split::at_zero);
  ASSERT_TRUE(first);
  EXPECT_EQ(split::shape(*first), (V{"0..1: load copy store ", "1..4: load load store "}));
  auto middle = cut(R"({"op": "eq", "args": [{"var": "i"}, 2]})");
  ASSERT_TRUE(middle);
  EXPECT_EQ(split::shape(*middle),
            (V{"0..2: load load store ", "2..3: load copy store ", "3..4: load load store "}));
  // Changing at every iteration (more than three loops): only the iteration where the view would leave Y
  // (i = 0) is peeled off, its branch decided; the loop keeps its `if` over the others.
  auto even = cut(split::even);
  ASSERT_TRUE(even);
  EXPECT_EQ(split::shape(*even), (V{"0..1: load copy store ", "1..4: load if store "}));
  // The same branch everywhere, or a condition the iteration number does not decide: nothing to cut.
  EXPECT_FALSE(cut(R"({"op": "lt", "args": [{"var": "i"}, 9]})"));
  EXPECT_FALSE(cut(R"({"op": "eq", "args": [{"param": "n"}, 0]})"));
}

TEST(TileKernels, ALoopIsNotCutWhereABranchMovingViewsInsideItsTensorChanges) {
  using V = std::vector<std::string>;
  // `else: b = load(Y.tile(0))`: inside Y at every iteration, moved by each iteration whatever branch it
  // takes.
  const std::string first_tile = R"({"op": "if", "cond": )" + split::at_zero + R"(,
      "then": [{"op": "copy", "dst": "b", "args": ["a"]}],
      "else": [{"op": "load", "dst": "b", "src": "Y", "offset": [0, 0]}]})";
  EXPECT_FALSE(
      htp::split_loop_at_conditions(iteration_kernel(("[" + split::loop(first_tile) + "]").c_str())));
  // Beside the previous tile under `if i == 0`, an `if i % 2 == 0` storing one register or another to
  // Y.tile(i) (changing at every iteration) stays in the loop: the loop is cut where `i == 0` changes only.
  const std::string stores = R"({"op": "if", "cond": )" + split::even + R"(,
      "then": [{"op": "store", "dst": "Y", "offset": [{"op": "mul", "args": [{"var": "i"}, 8]}, 0], "value": "a"}],
      "else": [{"op": "store", "dst": "Y", "offset": [{"op": "mul", "args": [{"var": "i"}, 8]}, 0], "value": "b"}]})";
  auto cut = htp::split_loop_at_conditions(
      iteration_kernel(("[" + split::loop(split::previous_under(split::at_zero), stores) + "]").c_str()));
  ASSERT_TRUE(cut);
  EXPECT_EQ(split::shape(*cut), (V{"0..1: load copy store if ", "1..4: load load store if "}));
}

TEST(TileKernels, AnIfInABranchAPieceTakesIsCutAtInTurn) {
  using V = std::vector<std::string>;
  // `if i > 0: if i < 3: b = load(Y.tile(i + 1))`: past Y at i = 3, under the inner `if` only.
  const std::string next = R"({"op": "if", "cond": {"op": "gt", "args": [{"var": "i"}, 0]}, "else": [],
      "then": [{"op": "if", "cond": {"op": "lt", "args": [{"var": "i"}, 3]}, "else": [],
                "then": [{"op": "load", "dst": "b", "src": "Y",
                          "offset": [{"op": "mul", "args": [{"op": "add", "args": [{"var": "i"}, 1]}, 8]}, 0]}]}]})";
  auto cut = htp::split_loop_at_conditions(iteration_kernel(
      ("[" + split::loop(R"({"op": "copy", "dst": "b", "args": ["a"]}, )" + next) + "]").c_str()));
  ASSERT_TRUE(cut);
  EXPECT_EQ(split::shape(*cut),
            (V{"0..1: load copy store ", "1..3: load copy load store ", "3..4: load copy store "}));
}

TEST(TileKernels, EveryLoopOfAKernelIsCutWhereItsBranchesChange) {
  using V = std::vector<std::string>;
  const std::string loop = split::loop(split::previous_under(split::at_zero));
  auto cut = htp::split_loop_at_conditions(iteration_kernel(("[" + loop + ", " + loop + "]").c_str()));
  ASSERT_TRUE(cut);
  EXPECT_EQ(split::shape(*cut), (V{"0..1: load copy store ", "1..4: load load store ",
                                   "0..1: load copy store ", "1..4: load load store "}));
}
