// The htp.plan.v1 document, written straight into one string. Its size is dominated by `facts_after`
// (every fact after every pass, so quadratic in the number of passes): each distinct fact is escaped once
// into a pre-rendered array element, and the sorted fact set is carried from pass to pass by inserting
// and erasing ranks instead of being rebuilt.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string_view>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "diag/diagnostic_json.hpp"
#include "json/json_text_writer.hpp"
#include "resolver/plan.hpp"

namespace htp {

namespace {

/// Asks the kernel to back the reserved, not yet touched capacity of `s` with transparent huge pages
/// where the system allows it (THP "madvise" mode). The document of a large plan is over 100 MB written
/// once into fresh memory: with 4 KiB pages most of its write time was page faults (one per 4 KiB),
/// with 2 MiB pages there are 512 times fewer. Advice only: without THP nothing changes.
void advise_huge_pages(std::string &s) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (s.capacity() < 4 * kHuge) return;
  const auto begin = reinterpret_cast<uintptr_t>(s.data() + s.size());
  const auto end = reinterpret_cast<uintptr_t>(s.data() + s.capacity());
  const uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t last = end & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void *>(first), last - first, MADV_HUGEPAGE);
#else
  (void)s;
#endif
}

/// Every fact the plan names, sorted as std::string sorts (the order of a std::set<std::string>), each
/// pre-rendered once as an element of a facts_after array.
class FactTable {
public:
  explicit FactTable(const Plan &plan) {
    size_t n = plan.initial_facts.size();
    for (const PlannedPass &p : plan.passes)
      n += p.added.size() + p.removed.size();
    texts_.reserve(n);
    for (const std::string &f : plan.initial_facts)
      texts_.push_back(f);
    for (const PlannedPass &p : plan.passes) {
      texts_.insert(texts_.end(), p.added.begin(), p.added.end());
      texts_.insert(texts_.end(), p.removed.begin(), p.removed.end());
    }
    std::sort(texts_.begin(), texts_.end());
    texts_.erase(std::unique(texts_.begin(), texts_.end()), texts_.end());
  }

  size_t size() const { return texts_.size(); }
  /// The rank of a fact the plan names.
  uint32_t rank(std::string_view text) const {
    return static_cast<uint32_t>(std::lower_bound(texts_.begin(), texts_.end(), text) - texts_.begin());
  }

  /// Renders every fact as `separator` followed by its JSON string.
  void render(const std::string &separator) {
    offsets_.reserve(texts_.size() + 1);
    offsets_.push_back(0);
    for (std::string_view t : texts_) {
      rendered_ += separator;
      append_json_string(rendered_, t);
      offsets_.push_back(rendered_.size());
    }
    rendered_.append(kCopy, ' '); // readable past the last element, for copy_element
    separator_size_ = separator.size();
  }

  /// Bytes copy_element moves at once: most elements are shorter.
  static constexpr size_t kCopy = 64;
  /// Copies fact r's element to `dst`, which has kCopy bytes of room past it; returns the end of the copy.
  /// An element of at most kCopy bytes is moved as one fixed-size block (a few vector moves, no call).
  char *copy_element(char *dst, uint32_t r) const {
    const char *src = rendered_.data() + offsets_[r];
    const size_t n = offsets_[r + 1] - offsets_[r];
    if (n <= kCopy)
      std::memcpy(dst, src, kCopy);
    else
      std::memcpy(dst, src, n);
    return dst + n;
  }
  /// Fact r as an array element after another one (separator included).
  std::string_view element(uint32_t r) const {
    return std::string_view(rendered_).substr(offsets_[r], offsets_[r + 1] - offsets_[r]);
  }
  /// Fact r as the first element of an array (the separator's leading ',' and layout left to the writer).
  std::string_view first_element(uint32_t r) const { return element(r).substr(separator_size_); }

private:
  std::vector<std::string_view> texts_;
  std::string rendered_;
  std::vector<size_t> offsets_;
  size_t separator_size_ = 0;
};

/// The fact set between passes: ascending ranks. The table must be rendered.
class FactSetWalk {
public:
  FactSetWalk(const Plan &plan, const FactTable &table) : table_(table) {
    for (const std::string &f : plan.initial_facts)
      ranks_.push_back(table.rank(f));
    std::sort(ranks_.begin(), ranks_.end());
    ranks_.erase(std::unique(ranks_.begin(), ranks_.end()), ranks_.end());
    for (uint32_t r : ranks_)
      bytes_ += table.element(r).size();
  }

  /// Applies pass p: its removed facts go, then its added facts come.
  void apply(const PlannedPass &p) {
    for (const std::string &f : p.removed) {
      uint32_t r = table_.rank(f);
      auto it = std::lower_bound(ranks_.begin(), ranks_.end(), r);
      if (it != ranks_.end() && *it == r) ranks_.erase(it), bytes_ -= table_.element(r).size();
    }
    for (const std::string &f : p.added) {
      uint32_t r = table_.rank(f);
      auto it = std::lower_bound(ranks_.begin(), ranks_.end(), r);
      if (it == ranks_.end() || *it != r) ranks_.insert(it, r), bytes_ += table_.element(r).size();
    }
  }
  const std::vector<uint32_t> &ranks() const { return ranks_; }
  /// Bytes of the present facts as pre-rendered elements.
  size_t bytes() const { return bytes_; }

  /// Bytes of every facts_after array of the plan, pre-rendered elements only (for reserving).
  static size_t rendered_bytes(const Plan &plan, const FactTable &table) {
    std::vector<char> present(table.size(), 0);
    size_t now = 0, total = 0;
    for (const std::string &f : plan.initial_facts) {
      uint32_t r = table.rank(f);
      if (!present[r]) present[r] = 1, now += table.element(r).size();
    }
    for (const PlannedPass &p : plan.passes) {
      for (const std::string &f : p.removed) {
        uint32_t r = table.rank(f);
        if (present[r]) present[r] = 0, now -= table.element(r).size();
      }
      for (const std::string &f : p.added) {
        uint32_t r = table.rank(f);
        if (!present[r]) present[r] = 1, now += table.element(r).size();
      }
      total += now;
    }
    return total;
  }

private:
  const FactTable &table_;
  std::vector<uint32_t> ranks_;
  size_t bytes_ = 0;
};

/// Writes the document into one string, or through a buffer drained into `sink` every kChunk bytes (the
/// 10,000-pass document is over 100 MB; a buffer that stays small stays in memory already mapped).
class PlanJsonWriter {
public:
  PlanJsonWriter(const Plan &plan, std::ostream *sink) : plan_(plan), sink_(sink), w_(2), facts_(plan) {
    if (sink_) w_.buffer().reserve(2 * kChunk);
  }

  std::string run() {
    w_.begin_object();
    w_.key("schema");
    w_.string(kPlanSchema);
    w_.key("target");
    w_.string(plan_.target);
    w_.key("backend");
    component_ref(plan_.backend);
    w_.key("binding");
    component_ref(plan_.binding);
    w_.key("pipeline");
    component_ref(plan_.pipeline);
    obligations();
    components();
    w_.key("initial_facts");
    strings(plan_.initial_facts);
    passes();
    derivation();
    w_.key("notes");
    strings(plan_.notes);
    w_.end_object();
    w_.buffer() += '\n';
    if (sink_) {
      drain(0);
      return {};
    }
    return w_.take();
  }

private:
  static constexpr size_t kChunk = size_t{1} << 20;
  std::vector<char> scratch_; ///< Streamed: one pass's facts_after elements.

  /// With a sink, hands it the buffer once it holds more than `above` bytes.
  void drain(size_t above) {
    std::string &out = w_.buffer();
    if (!sink_ || out.size() <= above) return;
    sink_->write(out.data(), static_cast<std::streamsize>(out.size()));
    out.clear();
  }

  void component_ref(const Component *c) {
    if (c)
      w_.string(c->id);
    else
      w_.null();
  }

  void strings(const std::vector<std::string> &list) {
    w_.begin_array();
    for (const std::string &s : list)
      w_.string(s);
    w_.end_array();
  }

  void obligations() {
    w_.key("obligations");
    w_.begin_array();
    for (const PlannedObligation &o : plan_.obligations) {
      w_.begin_object();
      w_.key("capability");
      w_.string(to_string(o.obligation.capability));
      w_.key("label");
      w_.string(o.obligation.display());
      w_.key("span");
      w_.value(span_to_json(o.obligation.span));
      w_.key("accepted_by");
      strings(o.accepted_by);
      w_.end_object();
    }
    w_.end_array();
  }

  void components() {
    w_.key("components");
    w_.begin_array();
    for (const Component *c : plan_.components) {
      w_.begin_object();
      w_.key("kind");
      w_.string(component_kind_name(c->kind));
      w_.key("id");
      w_.string(c->id);
      w_.key("version");
      w_.string(c->version);
      w_.key("plugin");
      w_.begin_object();
      w_.key("name");
      w_.string(c->plugin.name);
      w_.key("version");
      w_.string(c->plugin.version);
      w_.key("sha256");
      w_.string(c->plugin.sha256);
      if (!c->plugin.language.empty()) {
        w_.key("language");
        w_.string(c->plugin.language);
        w_.key("source");
        w_.string(c->plugin.path);
      }
      w_.end_object();
      w_.end_object();
    }
    w_.end_array();
  }

  /// Room for everything from the passes on, so the buffer grows once.
  void reserve_passes_and_derivation() {
    size_t bytes = FactSetWalk::rendered_bytes(plan_, facts_);
    for (const PlannedPass &p : plan_.passes) {
      bytes += 256 + p.component->id.size() * 2;
      for (const PassPredecessor &a : p.after)
        bytes += 64 + a.id.size() + a.reason.size();
      for (const auto *list : {&p.added, &p.removed})
        for (const std::string &f : *list)
          bytes += 16 + f.size();
    }
    for (const Derivation &d : plan_.derivation) {
      bytes += 512 + d.component.size() + d.because.size() + d.requirement.size() + d.required_by.size() +
               d.span.file.size();
      for (const PlanAlternative &a : d.alternatives)
        bytes += 96 + a.id.size() + a.verdict.size();
    }
    for (const std::string &n : plan_.notes)
      bytes += 16 + n.size();
    w_.buffer().reserve(w_.buffer().size() + bytes + bytes / 8);
    advise_huge_pages(w_.buffer());
  }

  void passes() {
    w_.key("passes");
    w_.begin_array();
    // Facts are array elements two levels down (passes[i].facts_after[k]): render each once.
    facts_.render(w_.element_separator(w_.depth() + 2));
    if (!sink_) reserve_passes_and_derivation();
    FactSetWalk walk(plan_, facts_);
    for (const PlannedPass &p : plan_.passes) {
      walk.apply(p);
      w_.begin_object();
      w_.key("id");
      w_.string(p.component->id);
      w_.key("version");
      w_.string(p.component->version);
      w_.key("stage");
      w_.string(pass_stage_name(p.component->stage));
      w_.key("plugin");
      w_.string(p.component->plugin.name);
      w_.key("after");
      w_.begin_array();
      for (const PassPredecessor &a : p.after) {
        w_.begin_object();
        w_.key("id");
        w_.string(a.id);
        w_.key("reason");
        w_.string(a.reason);
        w_.end_object();
      }
      w_.end_array();
      w_.key("added");
      strings(p.added);
      w_.key("removed");
      strings(p.removed);
      w_.key("facts_after");
      w_.begin_array();
      const std::vector<uint32_t> &ranks = walk.ranks();
      if (!ranks.empty()) {
        w_.separate();
        std::string_view first = facts_.first_element(ranks.front());
        const size_t size = walk.bytes() - (facts_.element(ranks.front()).size() - first.size());
        auto fill = [&](char *dst) {
          std::memcpy(dst, first.data(), first.size());
          dst += first.size();
          for (size_t i = 1; i < ranks.size(); ++i)
            dst = facts_.copy_element(dst, ranks[i]);
        };
        if (sink_) {
          // Streamed: the array goes to the sink from a scratch block that stays in cache, after what the
          // writer holds (no copy into the writer's buffer, no zero-filling it first).
          if (scratch_.size() < size + FactTable::kCopy) scratch_.resize(size + FactTable::kCopy);
          fill(scratch_.data());
          drain(0);
          sink_->write(scratch_.data(), static_cast<std::streamsize>(size));
        } else {
          std::string &out = w_.buffer();
          const size_t at = out.size();
          out.resize(at + size + FactTable::kCopy); // room for the last fixed-size copy
          fill(out.data() + at);
          out.resize(at + size);
        }
      }
      w_.end_array();
      w_.end_object();
      drain(kChunk);
    }
    w_.end_array();
  }

  void optional_string(const std::string &s) {
    if (s.empty())
      w_.null();
    else
      w_.string(s);
  }

  void derivation() {
    w_.key("derivation");
    w_.begin_array();
    for (const Derivation &d : plan_.derivation) {
      w_.begin_object();
      w_.key("component");
      w_.string(d.component);
      w_.key("kind");
      w_.string(d.kind);
      w_.key("rule");
      w_.string(d.rule);
      w_.key("because");
      w_.string(d.because);
      w_.key("requirement");
      optional_string(d.requirement);
      w_.key("required_by");
      optional_string(d.required_by);
      w_.key("span");
      w_.value(span_to_json(d.span));
      w_.key("alternatives");
      w_.begin_array();
      for (const PlanAlternative &a : d.alternatives) {
        w_.begin_object();
        w_.key("id");
        w_.string(a.id);
        w_.key("kind");
        w_.string(a.kind);
        w_.key("verdict");
        w_.string(a.verdict);
        w_.end_object();
      }
      w_.end_array();
      w_.end_object();
      drain(kChunk);
    }
    w_.end_array();
  }

  const Plan &plan_;
  std::ostream *sink_;
  JsonTextWriter w_;
  FactTable facts_;
};

} // namespace

std::string Plan::to_json_text() const {
  return PlanJsonWriter(*this, nullptr).run();
}

void Plan::write_json(std::ostream &out) const {
  PlanJsonWriter(*this, &out).run();
}

nlohmann::ordered_json Plan::to_json() const {
  // One definition of the document: the text writer's (parsing keeps the member order).
  return nlohmann::ordered_json::parse(to_json_text());
}

} // namespace htp
