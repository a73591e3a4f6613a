// An analysis pass, complete: per tile kernel, how many loads, stores and other tile calls it makes,
// recorded as the module attribute `ext.kernel_stats` ({"kernel": {"load": n, "store": n, "other": n}});
// a kernel that stores nothing gets a warning at its definition. It changes no node.
#include "ext_pack.hpp"

namespace extpack {

void kernel_stats(htp::PassContext &ctx) {
  htp::ModuleRef m = ctx.module();
  json stats = json::object();
  m.root().walk([&](htp::NodeRef fn) {
    if (!fn.is("FunctionDef")) return true;  // descend: functions sit in the module body
    // The frontend resolved each decorator to its dialect (whatever the user's spelling): typed reads,
    // no comparison with JSON text.
    if (fn.attr_string("htp.dialect") != "tile" || fn.attr_string("htp.decorator") != "kernel") return false;
    json counts = {{"load", 0}, {"store", 0}, {"other", 0}};
    fn.walk([&](htp::NodeRef n) {
      if (!n.is("Call")) return;
      std::string callee = n.child("func").dotted_name();  // "load", "tile.load", "P.exp", ...
      callee = callee.substr(callee.rfind('.') + 1);
      json &count = counts[callee == "load" || callee == "store" ? callee : "other"];
      count = count.get<int>() + 1;
    });
    if (counts["store"] == 0)
      ctx.warning(fn, "ext.kernel-no-store", "kernel '" + fn.text("name").value_or("?") + "' stores nothing");
    stats[fn.text("name").value_or("?")] = counts;
    return false;  // nested functions are not kernels of their own
  });
  m.set_attr("ext.kernel_stats", stats.dump());
}

}  // namespace extpack
