#include "options.hpp"

namespace htp_ptosim {

namespace {
constexpr std::pair<DispatchPolicy, std::string_view> kPolicies[] = {
    {DispatchPolicy::RoundRobin, "round_robin"},
    {DispatchPolicy::Affinity, "affinity"},
    {DispatchPolicy::Hash, "hash"},
    {DispatchPolicy::WorkSteal, "work_steal"},
};
} // namespace

uint64_t dispatch_hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

std::string_view policy_name(DispatchPolicy p) {
  for (const auto &[policy, name] : kPolicies)
    if (policy == p) return name;
  return "?";
}

std::optional<DispatchPolicy> parse_policy(std::string_view name) {
  for (const auto &[policy, n] : kPolicies)
    if (n == name) return policy;
  return std::nullopt;
}

} // namespace htp_ptosim
