// The host objects behind the ABI's opaque HtpModule and HtpPassContext handles.
#pragma once

#include <htp/abi.h>

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/module.hpp"
#include "diag/diagnostic.hpp"
#include "loader/host_api.hpp"

namespace htp {
class PackageWriter;

/// An obligation a scanner recorded: the capability text and the span that raised it.
struct RaisedObligation {
  std::string capability;
  Span span;
  std::string origin;  ///< The component that recorded it.
};

/// Wraps a pass's AST node handle conversions.
inline ast::Node *to_node(HtpNode *n) { return reinterpret_cast<ast::Node *>(n); }
inline const ast::Node *to_node(const HtpNode *n) { return reinterpret_cast<const ast::Node *>(n); }
inline HtpNode *to_handle(ast::Node *n) { return reinterpret_cast<HtpNode *>(n); }
inline const HtpNode *to_handle(const ast::Node *n) { return reinterpret_cast<const HtpNode *>(n); }

/// Told of every structural edit a plugin makes through the host API while it is installed on the module
/// (the rewrite driver's worklist). Node attributes are metadata and are not reported.
class EditListener {
public:
  virtual ~EditListener() = default;
  /// A structural edit of an attached or detached node is about to happen (the tree is still as it was).
  virtual void will_edit() {}
  /// A field of `node` changed (a child set, inserted or erased, or a scalar field written).
  virtual void changed(ast::Node &node) = 0;
  /// `subtree` was put into a field of its (new) parent.
  virtual void inserted(ast::Node &subtree) = 0;
  /// `subtree` left a field of `from` (it is detached now).
  virtual void removed(ast::Node &subtree, ast::Node &from) = 0;
};

}  // namespace htp

/// A module as plugins see it: the tree, plus ownership of nodes detached while passes run (their
/// handles stay valid until the module handle is destroyed) and a count of changes for traces.
struct HtpModule {
  htp::ast::Module *module = nullptr;
  std::vector<htp::ast::NodePtr> detached;
  size_t changes = 0;
  htp::EditListener *listener = nullptr;  ///< Set while the rewrite driver runs patterns.

  /// Takes ownership of a node that left the tree (or was created) and returns its handle.
  HtpNode *keep(htp::ast::NodePtr node);
  /// Releases ownership of a detached node so it can be inserted; nullptr when `node` is not detached
  /// here (it is in a tree, or belongs to another module).
  htp::ast::NodePtr take(HtpNode *node);
};

/// One pass or scanner invocation.
struct HtpPassContext {
  HtpModule *module = nullptr;
  HtpDiag diag;                        ///< Sink into `diagnostics`.
  htp::DiagnosticList diagnostics;
  nlohmann::json options = nlohmann::json::object();  ///< "target" and pass parameters.
  htp::PackageWriter *writer = nullptr;  ///< Set for passes allowed to write package files.
  htp::PackageWriter *records = nullptr; ///< The package, for host records every pass may leave (islands).
  std::string component;               ///< The pass or dialect id (writer name, provenance).
  std::vector<htp::RaisedObligation> *obligations = nullptr;  ///< Set for scanners.

  /// Outputs of the island steps run by this invocation (HtpHostApi.island_run hands out views of them).
  std::deque<std::string> island_outputs;
  /// Run when the invocation ends, last registered first (a language bridge expires its views here).
  std::vector<std::function<void()>> at_exit;

  HtpPassContext() { diag.list = &diagnostics; }
  ~HtpPassContext() {
    for (auto it = at_exit.rbegin(); it != at_exit.rend(); ++it) (*it)();
  }
  /// An invocation of `component` over `m` with `opts`.
  HtpPassContext(HtpModule *m, const nlohmann::json &opts, std::string component_id)
      : module(m), options(opts), component(std::move(component_id)) {
    diag.list = &diagnostics;
  }
  HtpPassContext(const HtpPassContext &) = delete;
  HtpPassContext &operator=(const HtpPassContext &) = delete;
};

namespace htp {

/// Fills the AST, module and pass-invocation functions (ABI 1.1) of a host table.
void fill_ast_api(HtpHostApi &api);

}  // namespace htp
