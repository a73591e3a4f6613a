#include "runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

#include <htp/run.hpp>

#include "intrinsic.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HTP_PTOSIM_PAUSE() _mm_pause()
#else
#define HTP_PTOSIM_PAUSE() std::this_thread::yield()
#endif

namespace htp_ptosim {

struct Task {
  uint64_t id = 0;
  int32_t func_id = -1;
  CoreType core = CoreType::None;
  KernelFn fn = nullptr;
  int64_t key = -1;
  int preferred = -1; // core that ran the last producer to complete (work stealing locality)
  std::vector<ChipTensor> tensors;
  uint64_t scalars[MAX_SCALAR_ARGS] = {};
  int32_t scalar_count = 0;
  int fanin = 1; // unfinished dependencies + the submission guard; under graph_mu_
  bool done = false;
  std::vector<Task *> deps;
  std::vector<Task *> fanout;
  TaskRecord rec;
};

namespace {

thread_local Runtime *tls_log_runtime = nullptr;

std::string vformat(const char *fmt, va_list ap) {
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  return buf;
}

void log_with(const char *level, const char *func, const char *fmt, va_list ap) {
  std::string line = std::string(level) + " " + (func ? func : "") + ": " + vformat(fmt, ap);
  if (tls_log_runtime)
    tls_log_runtime->log(line);
  else
    std::fprintf(stderr, "%s\n", line.c_str());
}

#define HTP_PTOSIM_LOG_FN(NAME, LEVEL)                                                                       \
  void NAME(const char *func, const char *fmt, ...) {                                                        \
    va_list ap;                                                                                              \
    va_start(ap, fmt);                                                                                       \
    log_with(LEVEL, func, fmt, ap);                                                                          \
    va_end(ap);                                                                                              \
  }
HTP_PTOSIM_LOG_FN(op_log_error, "error")
HTP_PTOSIM_LOG_FN(op_log_warn, "warning")
HTP_PTOSIM_LOG_FN(op_log_timing, "timing")
HTP_PTOSIM_LOG_FN(op_log_info, "info")
HTP_PTOSIM_LOG_FN(op_log_debug, "debug")
#undef HTP_PTOSIM_LOG_FN

Runtime &self_of(PTO2Runtime *rt) {
  return *reinterpret_cast<RuntimeHandle *>(rt)->self;
}

void op_report_fatal(PTO2Runtime *rt, int32_t code, const char *func, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = vformat(fmt, ap);
  va_end(ap);
  self_of(rt).fail(std::string(func ? func : "orchestration") + ": " + msg + " (code " +
                   std::to_string(code) + ")");
}

const PTO2RuntimeOps kOps = {
    [](PTO2Runtime *rt, const MixedKernels &k, const CoreTaskArgs &a) { return self_of(rt).submit(k, a); },
    [](PTO2Runtime *rt) { self_of(rt).scope_begin(); },
    [](PTO2Runtime *rt) { self_of(rt).scope_end(); },
    [](PTO2Runtime *) {},
    [](PTO2Runtime *rt) { return self_of(rt).failed(); },
    op_report_fatal,
    op_log_error,
    op_log_warn,
    op_log_timing,
    op_log_info,
    op_log_debug,
    [](PTO2Runtime *rt, const ChipTensor &t, uint32_t n, const uint32_t idx[]) {
      return self_of(rt).read_element(t, n, idx);
    },
    [](PTO2Runtime *rt, const ChipTensor &t, uint32_t n, const uint32_t idx[], uint64_t v) {
      self_of(rt).write_element(t, n, idx, v);
    },
    [](PTO2Runtime *rt, const CoreTaskArgs &a) { return self_of(rt).alloc(a); },
    [](PTO2Runtime *rt, const CoreTaskArgs &a) { return self_of(rt).submit_dummy(a); },
    [](PTO2Runtime *rt) { return self_of(rt).options().aic_cores; },
    [](PTO2Runtime *rt) { return self_of(rt).options().aiv_cores; },
};

} // namespace

/// A simulated AICore: the FIFO of tasks dispatched to it, the claim that lets exactly one thread at a time
/// execute on its behalf, and its own OS thread. The claim separates the core a policy picks (what the
/// trace records) from the thread that runs the task: a thread that completes a task may claim the idle
/// core of the successor it released and run the successor itself, without a cross-thread wake-up.
struct Core {
  Runtime *rt = nullptr;
  int index = 0;
  CoreType type = CoreType::AIV;
  std::string name;
  std::mutex mu;
  std::deque<Task *> queue; // under mu
  bool claimed = false;     // under mu: a thread is executing a task of this core
  std::atomic<size_t> queued{0}; // queue.size(), readable without mu
  std::atomic<uint32_t> signal{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> idle{false}; // its thread found no work and is polling or asleep
  std::atomic<uint64_t> tasks{0}, steals{0}, borrowed{0};
  GlobalContext gctx{};
  std::thread thread;

  /// Queues a task; returns how many tasks now wait in the queue.
  size_t push(Task *t) {
    size_t waiting;
    {
      std::lock_guard<std::mutex> lk(mu);
      queue.push_back(t);
      waiting = queue.size();
      queued.store(waiting, std::memory_order_relaxed);
    }
    wake();
    return waiting;
  }
  void wake() {
    signal.fetch_add(1, std::memory_order_release);
    signal.notify_one();
  }
  /// The front task, with the claim; nothing while another thread holds the claim.
  Task *take() {
    std::lock_guard<std::mutex> lk(mu);
    if (claimed || queue.empty()) return nullptr;
    Task *t = queue.front();
    queue.pop_front();
    queued.store(queue.size(), std::memory_order_relaxed);
    claimed = true;
    return t;
  }
  /// Claims the core if no thread runs a task of it and no task waits for it (so running a new task now
  /// keeps the core's FIFO order).
  bool claim_if_idle() {
    std::lock_guard<std::mutex> lk(mu);
    if (claimed || !queue.empty()) return false;
    claimed = true;
    return true;
  }
  /// Drops the claim; wakes the core's thread when tasks queued up meanwhile.
  void unclaim() {
    bool pending;
    {
      std::lock_guard<std::mutex> lk(mu);
      claimed = false;
      pending = !queue.empty();
    }
    if (pending) wake();
  }
  Task *steal_back() {
    std::lock_guard<std::mutex> lk(mu);
    if (queue.empty()) return nullptr;
    Task *t = queue.back();
    queue.pop_back();
    queued.store(queue.size(), std::memory_order_relaxed);
    return t;
  }
  /// Work stealing: claims this core and takes the newest task of a peer of the same type.
  Runtime::Claim steal() {
    if (!claim_if_idle()) return {};
    const auto &cs = rt->cores_;
    for (size_t i = 1; i < cs.size(); ++i) {
      Core &peer = *cs[(index + i) % cs.size()];
      if (peer.type != type) continue;
      if (Task *t = peer.steal_back()) {
        steals.fetch_add(1, std::memory_order_relaxed);
        return {t, this};
      }
    }
    unclaim();
    return {};
  }
  Runtime::Claim next() {
    if (Task *t = take()) return {t, this};
    if (rt->options_.dispatch == DispatchPolicy::WorkSteal) return steal();
    return {};
  }
  void loop() {
    while (true) {
      const uint32_t seen = signal.load(std::memory_order_acquire);
      if (Runtime::Claim c = next(); c.task) {
        rt->run_claimed(c, *this);
        continue;
      }
      if (stop.load(std::memory_order_acquire)) return;
      idle.store(true, std::memory_order_relaxed);
      if (!spin_until_signal(seen)) signal.wait(seen, std::memory_order_acquire);
      idle.store(false, std::memory_order_relaxed);
    }
  }

  /// Polls for new work for a short while (a hand-off to a polling core costs far less than a futex wake).
  bool spin_until_signal(uint32_t seen) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
    for (int i = 0;; ++i) {
      if (signal.load(std::memory_order_acquire) != seen) return true;
      if (i % 16 == 15) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::yield();
      } else {
        HTP_PTOSIM_PAUSE();
      }
    }
  }
  static constexpr int kSpinMicros = 50;
};

Runtime::Runtime(const RuntimeOptions &options)
    : options_(options), epoch_(std::chrono::steady_clock::now()) {
  options_.aiv_cores = std::max(0, options_.aiv_cores);
  options_.aic_cores = std::max(0, options_.aic_cores);
  options_.schedulers = std::max(1, options_.schedulers);
  options_.task_window = std::max(1, options_.task_window);
  handle_.base.ops = &kOps;
  handle_.base.pending_scope_mode = PTO2ScopeMode::AUTO;
  handle_.self = this;
  scopes_.emplace_back(); // the outermost scope: the run
  const int total = options_.aiv_cores + options_.aic_cores;
  for (int i = 0; i < total; ++i) {
    auto c = std::make_unique<Core>();
    c->rt = this;
    c->index = i;
    c->type = i < options_.aiv_cores ? CoreType::AIV : CoreType::AIC;
    c->name = worker_name(i);
    cores_.push_back(std::move(c));
  }
  for (auto &c : cores_)
    c->thread = std::thread([p = c.get()] { p->loop(); });
  for (int i = 0; i < options_.schedulers; ++i)
    schedulers_.emplace_back([this, i] { scheduler_loop(i); });
}

Runtime::~Runtime() {
  if (tls_log_runtime == this) tls_log_runtime = nullptr;
  wait_all();
  {
    std::lock_guard<std::mutex> lk(ready_mu_);
    stopping_ = true;
  }
  ready_cv_.notify_all();
  for (auto &s : schedulers_)
    s.join();
  for (auto &c : cores_) {
    c->stop.store(true, std::memory_order_release);
    c->wake();
  }
  for (auto &c : cores_)
    c->thread.join();
}

std::string Runtime::worker_name(int index) const {
  return index < options_.aiv_cores ? "AIV" + std::to_string(index)
                                    : "AIC" + std::to_string(index - options_.aiv_cores);
}

void Runtime::set_kernel(int32_t func_id, CoreType core, KernelFn fn, std::string name) {
  if (func_id < 0) return;
  if (static_cast<size_t>(func_id) >= kernels_.size()) kernels_.resize(func_id + 1);
  kernels_[func_id] = KernelInfo{core, fn, std::move(name)};
}

PTO2Runtime *Runtime::api() {
  tls_log_runtime = this;
  return &handle_.base;
}

void Runtime::log(const std::string &line) {
  std::lock_guard<std::mutex> lk(error_mu_);
  log_.push_back(line);
}

std::vector<std::string> Runtime::log_lines() const {
  std::lock_guard<std::mutex> lk(error_mu_);
  return log_;
}

void Runtime::fail(const std::string &message) {
  std::lock_guard<std::mutex> lk(error_mu_);
  if (error_.empty()) error_ = message;
  fatal_.store(true, std::memory_order_release);
}

std::string Runtime::error() const {
  std::lock_guard<std::mutex> lk(error_mu_);
  return error_;
}

unsigned char *Runtime::allocate(uint64_t bytes) {
  auto buf = std::unique_ptr<unsigned char[]>(new unsigned char[std::max<uint64_t>(bytes, 1)]());
  unsigned char *p = buf.get();
  scopes_.back().buffers.push_back(std::move(buf));
  return p;
}

void Runtime::scope_begin() {
  std::lock_guard<std::mutex> lk(graph_mu_);
  scopes_.emplace_back();
}

void Runtime::scope_end() {
  std::lock_guard<std::mutex> lk(graph_mu_);
  if (scopes_.size() <= 1) return;
  // Tasks of the scope may still read its buffers: they are released when the run ends.
  retired_.push_back(std::move(scopes_.back()));
  scopes_.pop_back();
}

/// Sleeps until `target` tasks completed. The waiter publishes its target in wake_at_ so that only the
/// completion reaching it notifies (a notify per completion would wake the waiter once per task).
void Runtime::wait_completed(uint64_t target) {
  while (true) {
    uint64_t at = wake_at_.load();
    while (target < at && !wake_at_.compare_exchange_weak(at, target)) {
    }
    if (completed_.load() >= target) return; // seq_cst: pairs with count_completion's load of wake_at_
    std::unique_lock<std::mutex> lk(completed_mu_);
    // (re-checked under the lock: a completion past the target after this check locks and notifies)
    completed_cv_.wait(lk, [&] { return completed_.load() >= target || wake_at_.load() == UINT64_MAX; });
  }
}

void Runtime::count_completion() {
  const uint64_t done = completed_.fetch_add(1) + 1;
  uint64_t at = wake_at_.load();
  if (done < at) return;
  wake_at_.compare_exchange_strong(at, UINT64_MAX); // waiters not satisfied yet publish their target again
  { std::lock_guard<std::mutex> lk(completed_mu_); }  // a waiter between its check and its sleep sees the count
  completed_cv_.notify_all();
}

void Runtime::wait_window() {
  const uint64_t in_flight_max = static_cast<uint64_t>(options_.task_window);
  const uint64_t submitted = submitted_.load();
  if (submitted >= in_flight_max) wait_completed(submitted - in_flight_max + 1);
}

Task *Runtime::new_task(const MixedKernels &kernels, const CoreTaskArgs &args, TaskOutputTensors &outs) {
  auto owned = std::make_unique<Task>();
  Task *t = owned.get();
  t->id = tasks_.size();
  tasks_.push_back(std::move(owned));
  if (kernels.aic_kernel_id != INVALID_KERNEL_ID) {
    t->func_id = kernels.aic_kernel_id;
    t->core = CoreType::AIC;
  } else if (kernels.aiv0_kernel_id != INVALID_KERNEL_ID || kernels.aiv1_kernel_id != INVALID_KERNEL_ID) {
    t->func_id =
        kernels.aiv0_kernel_id != INVALID_KERNEL_ID ? kernels.aiv0_kernel_id : kernels.aiv1_kernel_id;
    t->core = CoreType::AIV;
  }
  t->key = args.htp_key >= 0 ? args.htp_key : static_cast<int64_t>(t->id);
  t->tensors.resize(args.tensor_count());
  for (int32_t i = 0; i < args.tensor_count(); ++i) {
    ChipTensor &dst = t->tensors[i];
    if (args.tag(i) == TensorArgType::OUTPUT) {
      const TensorCreateInfo &ci = args.tensor(i).create_info();
      const uint64_t bytes = ci.buffer_size_bytes();
      unsigned char *buf = allocate(bytes);
      if (ci.has_initial_value) {
        const uint64_t es = get_element_size(ci.dtype);
        for (uint64_t off = 0; off + es <= bytes; off += es)
          std::memcpy(buf + off, &ci.initial_value, es);
      }
      dst.init_external(buf, bytes, ci.shapes, ci.ndims, ci.dtype, 0, ci.manual_dep);
      dst.owner_task_id = PTO2TaskId{t->id};
      outs.materialize_output(dst);
    } else {
      dst = args.tensor(i).ref();
    }
  }
  t->scalar_count = args.scalar_count();
  std::copy(args.scalar_data(), args.scalar_data() + args.scalar_count(), t->scalars);
  t->rec.id = t->id;
  t->rec.func_id = t->func_id;
  t->rec.core = t->core;
  t->rec.key = t->key;
  outs.set_task_id(PTO2TaskId{t->id});
  return t;
}

void Runtime::depend(Task *task, Task *producer) {
  if (producer == task) return;
  if (std::find(task->rec.preds.begin(), task->rec.preds.end(), producer->id) == task->rec.preds.end())
    task->rec.preds.push_back(producer->id);
  if (producer->done) return;
  if (std::find(task->deps.begin(), task->deps.end(), producer) != task->deps.end()) return;
  task->deps.push_back(producer);
  producer->fanout.push_back(task);
  ++task->fanin;
}

void Runtime::prune(std::vector<Access> &accesses) {
  accesses.erase(
      std::remove_if(accesses.begin(), accesses.end(), [](const Access &a) { return a.task->done; }),
      accesses.end());
}

// pto-runtime 6ebaf7715's rule, modelled exactly so that a package relying on more ordering fails here as
// it would there: an input or inout argument waits for the earlier writers of what it overlaps; an existing
// tensor written with add_output waits for nothing; nothing waits for readers (no write-after-read
// tracking). Order beyond that is the orchestration's job (add_inout, set_dependencies). Readers are still
// recorded: set_tensor_data waits for them, as the runtime's waits for the producer's consumers.
void Runtime::track(Task *task, const ChipTensor &t, bool waits, bool writes) {
  const uint64_t es = get_element_size(t.dtype);
  const uint64_t lo = t.buffer.addr + t.start_offset * es;
  const uint64_t hi = lo + t.extent_elem() * es;
  if (hi == lo || (!waits && !writes)) return;
  auto &accesses = accesses_[t.buffer.addr];  // the buffer's writers and readers, oldest first
  if (waits)
    for (const Access &a : accesses)
      if (a.write && a.lo < hi && lo < a.hi) depend(task, a.task);
  if (writes)  // a writer this one covers is superseded: later readers wait for the newest producer
    accesses.erase(std::remove_if(accesses.begin(), accesses.end(),
                                  [&](const Access &a) { return a.write && a.lo >= lo && a.hi <= hi; }),
                   accesses.end());
  accesses.push_back(Access{lo, hi, task, writes});
  if (accesses.size() >= 32 && accesses.size() % 32 == 0) prune(accesses);
}

void Runtime::wire_dependencies(Task *task, const CoreTaskArgs &args) {
  for (int32_t i = 0; i < args.tensor_count(); ++i) {
    const TensorArgType tag = args.tag(i);
    if (tag == TensorArgType::NO_DEP) continue;
    const bool waits = tag == TensorArgType::INPUT || tag == TensorArgType::INOUT;
    const bool writes = tag != TensorArgType::INPUT;
    track(task, task->tensors[i], waits, writes);
  }
  for (uint32_t i = 0; i < args.explicit_dep_count(); ++i) {
    const PTO2TaskId id = args.explicit_dep(i);
    if (id.is_valid() && id.raw < tasks_.size()) depend(task, tasks_[id.raw].get());
  }
  if (args.htp_stream >= 0) {
    Task *&last = streams_[args.htp_stream];
    if (last) depend(task, last);
    last = task;
  }
}

TaskOutputTensors Runtime::submit(const MixedKernels &kernels, const CoreTaskArgs &args) {
  TaskOutputTensors outs;
  if (failed()) return outs;
  if (args.has_error) {
    fail(std::string("submit: ") + (args.error_msg ? args.error_msg : "malformed task arguments"));
    return outs;
  }
  const bool is_dummy = kernels.aic_kernel_id == INVALID_KERNEL_ID &&
                        kernels.aiv0_kernel_id == INVALID_KERNEL_ID &&
                        kernels.aiv1_kernel_id == INVALID_KERNEL_ID;
  const int32_t fid =
      kernels.aic_kernel_id != INVALID_KERNEL_ID ? kernels.aic_kernel_id : kernels.aiv0_kernel_id;
  if (kernels.aic_kernel_id != INVALID_KERNEL_ID &&
      (kernels.aiv0_kernel_id != INVALID_KERNEL_ID || kernels.aiv1_kernel_id != INVALID_KERNEL_ID)) {
    fail("submit: MIX tasks (an AIC and AIV kernels in one task) are not simulated; submit them as separate "
         "tasks");
    return outs;
  }
  if (!is_dummy) {
    const bool aic = kernels.aic_kernel_id != INVALID_KERNEL_ID;
    if (fid < 0 || static_cast<size_t>(fid) >= kernels_.size() || !kernels_[fid].fn) {
      fail("submit: no kernel with func_id " + std::to_string(fid));
      return outs;
    }
    if (kernels_[fid].core != (aic ? CoreType::AIC : CoreType::AIV)) {
      fail("submit: kernel " + kernels_[fid].name + " (func_id " + std::to_string(fid) + ") is an " +
           (aic ? "AIV" : "AIC") + " kernel but was submitted with rt_submit_" + (aic ? "aic" : "aiv") +
           "_task");
      return outs;
    }
    if ((aic ? options_.aic_cores : options_.aiv_cores) == 0) {
      fail(std::string("submit: the simulator has no ") + (aic ? "AIC" : "AIV") + " cores");
      return outs;
    }
  }
  wait_window();
  Task *task;
  bool ready;
  {
    std::lock_guard<std::mutex> lk(graph_mu_);
    task = new_task(kernels, args, outs);
    if (!is_dummy) task->fn = kernels_[fid].fn;
    wire_dependencies(task, args);
    submitted_.fetch_add(1);
    ready = --task->fanin == 0; // drops the submission guard
  }
  if (ready) make_ready(task);
  return outs;
}

TaskOutputTensors Runtime::submit_dummy(const CoreTaskArgs &args) {
  return submit(MixedKernels{}, args);
}

TaskOutputTensors Runtime::alloc(const CoreTaskArgs &args) {
  TaskOutputTensors outs;
  std::lock_guard<std::mutex> lk(graph_mu_);
  auto holder = std::make_unique<Task>(); // owns the ChipTensors; never scheduled
  holder->tensors.resize(args.tensor_count());
  for (int32_t i = 0; i < args.tensor_count(); ++i) {
    if (args.tag(i) != TensorArgType::OUTPUT) continue;
    const TensorCreateInfo &ci = args.tensor(i).create_info();
    unsigned char *buf = nullptr;
    try {
      buf = allocate(ci.buffer_size_bytes());
    } catch (const std::bad_alloc &) {  // a workload intermediate or a channel's ring past the host's memory
      std::string shape;
      for (uint32_t d = 0; d < ci.ndims; ++d) shape += (d ? " x " : "") + std::to_string(ci.shapes[d]);
      throw std::runtime_error("alloc_tensors: a runtime-owned tensor of " + shape + " elements (" +
                               std::to_string(ci.buffer_size_bytes()) +
                               " bytes: a workload intermediate or a channel's ring) cannot be allocated: out of "
                               "host memory");
    }
    holder->tensors[i].init_external(buf, ci.buffer_size_bytes(), ci.shapes, ci.ndims, ci.dtype, 0,
                                     ci.manual_dep);
    outs.materialize_output(holder->tensors[i]);
  }
  holder->done = true;
  holder->id = UINT64_MAX;
  allocations_.push_back(std::move(holder));
  return outs;
}

void Runtime::make_ready(Task *task) {
  {
    std::lock_guard<std::mutex> lk(ready_mu_);
    ready_.push_back(task);
  }
  ready_cv_.notify_one();
}

void Runtime::scheduler_loop(int) {
  std::deque<Task *> batch;
  const size_t n = static_cast<size_t>(std::max(1, options_.batch));
  while (true) {
    {
      std::unique_lock<std::mutex> lk(ready_mu_);
      ready_cv_.wait(lk, [&] { return stopping_ || !ready_.empty(); });
      if (ready_.empty()) return;
      if (n > 1 && ready_.size() < n) // timing(batched(n)): let the batch fill, a bounded while
        ready_cv_.wait_for(lk, std::chrono::microseconds(options_.batch_wait_us),
                           [&] { return stopping_ || ready_.size() >= n; });
      if (n == 1) {
        batch.swap(ready_);
      } else {
        const size_t take = std::min(n, ready_.size());
        batch.assign(ready_.begin(), ready_.begin() + static_cast<long>(take));
        ready_.erase(ready_.begin(), ready_.begin() + static_cast<long>(take));
        batches_[static_cast<int>(take)]++;
      }
    }
    for (Task *t : batch)
      dispatch(t);
    batch.clear();
  }
}

std::map<int, int64_t> Runtime::batch_sizes() const {
  std::lock_guard<std::mutex> lk(ready_mu_);
  return batches_;
}

int Runtime::choose_core(Task *task) {
  const bool aic = task->core == CoreType::AIC;
  const int base = aic ? options_.aiv_cores : 0;
  const int n = aic ? options_.aic_cores : options_.aiv_cores;
  switch (options_.dispatch) {
  case DispatchPolicy::Affinity: return base + static_cast<int>(static_cast<uint64_t>(task->key) % n);
  case DispatchPolicy::Hash:
    return base + static_cast<int>(dispatch_hash(static_cast<uint64_t>(task->key)) % n);
  case DispatchPolicy::WorkSteal:
    if (task->preferred >= base && task->preferred < base + n) return task->preferred;
    [[fallthrough]];
  case DispatchPolicy::RoundRobin:
  default: return base + static_cast<int>(rr_[aic ? 1 : 0].fetch_add(1, std::memory_order_relaxed) % n);
  }
}

void Runtime::dispatch(Task *task) {
  if (task->core == CoreType::None) { // a dummy task completes where it is dispatched
    task->rec.start_us = task->rec.end_us = now_us();
    complete(task, -1, nullptr);
    return;
  }
  place(task, assign_core(task));
}

int Runtime::assign_core(Task *task) {
  task->rec.assigned = choose_core(task);
  return task->rec.assigned;
}

Runtime::Claim Runtime::claim_or_place(Task *task) {
  const int k = assign_core(task);
  Core &core = *cores_[k];
  if (core.claim_if_idle()) return {task, &core};
  place(task, k);
  return {};
}

void Runtime::place(Task *task, int core) {
  const size_t waiting = cores_[core]->push(task);
  if (options_.dispatch == DispatchPolicy::WorkSteal && waiting > 1) // a backlog: let an idle peer steal
    for (size_t i = 1; i < cores_.size(); ++i) {
      Core &peer = *cores_[(core + i) % cores_.size()];
      if (peer.type == task->core && peer.idle.load(std::memory_order_relaxed)) {
        peer.wake();
        break;
      }
    }
}

void Runtime::execute(Task *t, Core &core, Core &thread) {
  t->rec.start_us = now_us();
  if (!failed() && t->fn) {
    int64_t args[HTP_PTOSIM_KERNEL_ARG_SLOTS] = {};
    const size_t nt = t->tensors.size();
    for (size_t i = 0; i < nt; ++i)
      args[i] = reinterpret_cast<int64_t>(&t->tensors[i]);
    for (int32_t i = 0; i < t->scalar_count; ++i)
      args[nt + i] = static_cast<int64_t>(t->scalars[i]);
    LocalContext local{0, 1};
    args[SPMD_LOCAL_CONTEXT_INDEX] = reinterpret_cast<int64_t>(&local);
    args[SPMD_GLOBAL_CONTEXT_INDEX] = reinterpret_cast<int64_t>(&core.gctx);
    try {
      t->fn(args);
    } catch (const std::exception &e) {
      // A kernel's runtime check names the program's line first (prog.py:12: runtime data: ...): the message
      // keeps it first, so the error is placed there, and names the task after it.
      const std::string task = "task " + std::to_string(t->id), kernel = "kernel " + kernels_[t->func_id].name +
                                                                          " on " + core.name;
      const std::string what = e.what();
      fail(htp::located_message(what).first.line ? what + " (" + task + ", " + kernel + ")"
                                                 : task + " (" + kernel + "): " + what);
    } catch (...) {
      fail("task " + std::to_string(t->id) + " (kernel " + kernels_[t->func_id].name + " on " + core.name +
           "): unknown exception");
    }
  }
  t->rec.end_us = now_us();
  t->rec.worker = core.index;
  t->rec.thread = thread.index;
  core.tasks.fetch_add(1, std::memory_order_relaxed);
  if (&core != &thread) core.borrowed.fetch_add(1, std::memory_order_relaxed);
}

/// Runs a claimed task on `thread` (a core's own thread), then, as long as each completion hands back a
/// successor whose core it claimed, that successor.
void Runtime::run_claimed(Claim claim, Core &thread) {
  while (claim.task) {
    execute(claim.task, *claim.core, thread);
    claim.core->unclaim();
    claim = complete(claim.task, claim.core->index, &thread);
  }
}

Runtime::Claim Runtime::complete(Task *task, int core, Core *thread) {
  std::vector<Task *> ready;
  {
    std::lock_guard<std::mutex> lk(graph_mu_);
    task->done = true;
    ready.swap(task->fanout); // reuses the fanout's storage for the successors made ready
    size_t n = 0;
    for (Task *s : ready) {
      s->preferred = core;
      if (--s->fanin == 0) ready[n++] = s;
    }
    ready.resize(n);
  }
  // Successors made ready by a completion are dispatched right here, as an AICPU scheduler that polls
  // completions would, instead of paying a second thread hand-off through the ready queue. The last one
  // runs on this thread when its core is idle and this thread's own core has no queued work.
  Claim next;
  for (size_t i = 0; i < ready.size(); ++i) {
    const bool may_run_here = thread && i + 1 == ready.size() && ready[i]->core != CoreType::None &&
                              thread->queued.load(std::memory_order_relaxed) == 0;
    if (may_run_here)
      next = claim_or_place(ready[i]);
    else
      dispatch(ready[i]);
  }
  count_completion();
  return next;
}

double Runtime::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - epoch_).count();
}

void Runtime::orchestration_begin() {
  orchestration_start_us_ = now_us();
}

void Runtime::orchestration_end() {
  orchestration_end_us_ = now_us();
}

void Runtime::wait_all() {
  wait_completed(submitted_.load());
}

void Runtime::wait_range(const ChipTensor &t, bool for_write) {
  const uint64_t es = get_element_size(t.dtype);
  const uint64_t lo = t.buffer.addr + t.start_offset * es, hi = lo + t.extent_elem() * es;
  while (true) {
    {
      std::lock_guard<std::mutex> lk(graph_mu_);
      auto it = accesses_.find(t.buffer.addr);
      if (it == accesses_.end()) return;
      const bool pending = std::any_of(it->second.begin(), it->second.end(), [&](const Access &a) {
        return !a.task->done && a.lo < hi && lo < a.hi && (for_write || a.write);
      });
      if (!pending) return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

namespace {

// The simulator never reads or writes outside a tensor, whatever indices generated code computes from
// runtime data: the orchestration's exception becomes the run's error.
void check_element_index(const ChipTensor &t, uint32_t ndims, const uint32_t idx[], const char *what) {
  if (ndims != t.ndims)
    throw std::out_of_range(std::string(what) + ": " + std::to_string(ndims) + " indices for a " +
                            std::to_string(t.ndims) + "-D tensor");
  for (uint32_t d = 0; d < ndims; ++d)
    if (idx[d] >= t.shapes[d])
      throw std::out_of_range(std::string(what) + ": index " + std::to_string(idx[d]) + " of dimension " +
                              std::to_string(d) + " is outside its extent " + std::to_string(t.shapes[d]));
}

} // namespace

uint64_t Runtime::read_element(const ChipTensor &t, uint32_t ndims, const uint32_t idx[]) {
  check_element_index(t, ndims, idx, "get_tensor_data");
  wait_range(t, false);
  const uint64_t es = get_element_size(t.dtype);
  uint64_t v = 0;
  std::memcpy(&v,
              reinterpret_cast<const unsigned char *>(t.buffer.addr) + t.compute_flat_offset(idx, ndims) * es,
              es);
  return v;
}

void Runtime::write_element(const ChipTensor &t, uint32_t ndims, const uint32_t idx[], uint64_t value) {
  check_element_index(t, ndims, idx, "set_tensor_data");
  wait_range(t, true);
  const uint64_t es = get_element_size(t.dtype);
  std::memcpy(reinterpret_cast<unsigned char *>(t.buffer.addr) + t.compute_flat_offset(idx, ndims) * es,
              &value, es);
}

std::vector<TaskRecord> Runtime::records() const {
  std::lock_guard<std::mutex> lk(graph_mu_);
  std::vector<TaskRecord> out;
  out.reserve(tasks_.size());
  for (const auto &t : tasks_)
    out.push_back(t->rec);
  return out;
}

std::vector<WorkerStats> Runtime::worker_stats() const {
  std::vector<WorkerStats> out;
  for (const auto &c : cores_)
    out.push_back(WorkerStats{c->name, c->tasks.load(), c->steals.load(), c->borrowed.load(), c->queued.load()});
  return out;
}

} // namespace htp_ptosim
