#include "ast_bindings.hpp"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ast/grammar.hpp"
#include "ast/json_reader.hpp"
#include "ast/json_writer.hpp"
#include "ast/printer.hpp"
#include "ast/walk.hpp"

namespace py = pybind11;

namespace htp::python {
namespace {

ast::Module load_or_raise(const std::string &text) {
  auto m = ast::load_json(text);
  if (!m) throw py::value_error(m.error().render());
  return std::move(*m);
}

// One document of a batch: the re-dumped JSON and/or the printed source, and the node count.
using BatchResult = std::tuple<std::optional<std::string>, std::optional<std::string>, size_t>;

std::vector<BatchResult> process_batch(const std::vector<std::string> &texts, bool dump, bool unparse) {
  std::vector<BatchResult> results(texts.size());
  std::optional<std::string> failure;
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < texts.size() && !failure; ++i) {
      auto m = ast::load_json(texts[i]);
      if (!m) {
        failure = "document " + std::to_string(i) + ": " + m.error().render();
        break;
      }
      auto &[json, source, count] = results[i];
      if (dump) json = ast::dump_json(*m);
      if (unparse) source = ast::to_source(*m);
      count = m->root ? ast::node_count(*m->root) : 0;
    }
  }
  if (failure) throw py::value_error(*failure);
  return results;
}

py::list grammar_table() {
  py::list kinds;
  for (size_t k = 0; k < ast::kKindCount; ++k) {
    const auto &info = ast::kind_info(static_cast<ast::Kind>(k));
    py::list fields;
    for (const auto &f : info.fields)
      fields.append(py::make_tuple(std::string(f.name), std::string(ast::field_kind_name(f.kind)),
                                   std::string(ast::category_name(f.category))));
    py::dict d;
    d["name"] = std::string(info.name);
    d["category"] = std::string(ast::category_name(info.category));
    d["located"] = info.located;
    d["fields"] = fields;
    kinds.append(d);
  }
  return kinds;
}

} // namespace

void bind_ast(py::module_ &m) {
  m.def(
      "ast_roundtrip_json",
      [](const std::string &text, int indent) {
        ast::Module module = load_or_raise(text);
        py::gil_scoped_release release;
        return ast::dump_json(module, indent);
      },
      py::arg("text"), py::arg("indent") = -1,
      "Loads an htp.ast.v1 document into the C++ tree and dumps it again; ValueError with the "
      "diagnostic (naming the JSON path) on bad input.");
  m.def(
      "ast_unparse_json",
      [](const std::string &text) {
        ast::Module module = load_or_raise(text);
        py::gil_scoped_release release;
        return ast::to_source(module);
      },
      py::arg("text"),
      "Loads an htp.ast.v1 document and prints its tree as Python source (as ast.unparse would); "
      "ValueError with the diagnostic on bad input.");
  m.def("ast_json_batch", &process_batch, py::arg("texts"), py::arg("dump") = true,
        py::arg("unparse") = false,
        "For each htp.ast.v1 document: (re-dumped JSON or None, printed source or None, node count), "
        "computed without the GIL; ValueError naming the first bad document.");
  m.def("ast_grammar", &grammar_table,
        "The host's node table: one dict per node type with name, category, located and fields "
        "[(name, kind, category)].");
}

} // namespace htp::python
