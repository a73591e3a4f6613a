#include "resolver/pass_order.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

namespace htp {

namespace {
using PassGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
}

PassOrder order_passes(uint32_t n, const std::vector<uint64_t> &rank, const std::vector<PassEdge> &edges) {
  PassGraph g(n);
  std::vector<uint32_t> indegree(n, 0);
  for (const PassEdge &e : edges) {
    boost::add_edge(e.from, e.to, g);
    ++indegree[e.to];
  }

  using Ready = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (uint32_t v = 0; v < n; ++v)
    if (indegree[v] == 0) ready.emplace(rank[v], v);

  PassOrder result;
  result.order.reserve(n);
  while (!ready.empty()) {
    uint32_t v = ready.top().second;
    ready.pop();
    result.order.push_back(v);
    for (auto [it, end] = boost::out_edges(v, g); it != end; ++it) {
      auto w = static_cast<uint32_t>(boost::target(*it, g));
      if (--indegree[w] == 0) ready.emplace(rank[w], w);
    }
  }
  if (result.order.size() == n) return result;

  std::vector<int> component(n);
  int count = boost::strong_components(
      g, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, g)));
  std::vector<std::vector<uint32_t>> members(static_cast<size_t>(count));
  for (uint32_t v = 0; v < n; ++v)
    members[static_cast<size_t>(component[v])].push_back(v);
  for (auto &m : members) {
    if (m.size() < 2) continue;
    std::sort(m.begin(), m.end(), [&](uint32_t a, uint32_t b) { return rank[a] < rank[b]; });
    result.cycles.push_back(std::move(m));
  }
  std::sort(result.cycles.begin(), result.cycles.end(),
            [&](const auto &a, const auto &b) { return rank[a.front()] < rank[b.front()]; });
  return result;
}

} // namespace htp
