// Helpers of the a2a3sim binding tests (binding_test.cpp, pto_runtime_test.cpp): packages under packages/,
// host tensors with their DLPack views, fresh work directories, environment variables set for one test.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include "sim_run.hpp"

namespace ptosim_test {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace htp_ptosim;

inline const fs::path kPackages = fs::path(HTP_TEST_SOURCE_DIR) / "tests/plugins/backend-pto/sim/packages";
inline const fs::path kWork = fs::path(HTP_TEST_BINARY_DIR) / "ptosim-tests";

/// A float32 host array with its DLPack view.
struct HostTensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
  DLTensor dl{};
  HostTensor(std::vector<int64_t> s, float fill) : data(count(s), fill), shape(std::move(s)) { bind(); }
  HostTensor(std::vector<int64_t> s, unsigned seed) : data(count(s)), shape(std::move(s)) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> d(-1, 1);
    for (float &x : data)
      x = d(gen);
    bind();
  }
  static size_t count(const std::vector<int64_t> &s) {
    size_t n = 1;
    for (int64_t d : s)
      n *= d;
    return n;
  }
  void bind() {
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.data();
  }
  float at(int64_t r, int64_t c) const { return data[r * shape[1] + c]; }
};

inline fs::path fresh_dir(const std::string &name) {
  const fs::path d = kWork / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline SimRunRequest request(const fs::path &package, const std::string &entry, const std::string &name,
                      const fs::path &cache = kWork / "shared-cache") {
  SimRunRequest r;
  r.package_dir = package.string();
  r.entry = entry;
  r.cache_dir = cache.string();
  r.run_dir = fresh_dir(name + "-run").string();
  r.options = {{"sim_include", HTP_PTOSIM_INCLUDE_DIR}};
  return r;
}

/// Runs and returns the failure's code and message.
inline std::pair<std::string, std::string> run_failure(const SimRunRequest &r) {
  try {
    run_package(r);
  } catch (const RunFailure &e) {
    return {e.code, e.what()};
  }
  return {"", "the run succeeded"};
}

inline fs::path copy_package(const std::string &name, const std::string &as) {
  const fs::path dst = fresh_dir(as) / name;
  fs::copy(kPackages / name, dst, fs::copy_options::recursive);
  return dst;
}

inline void append(const fs::path &file, const std::string &text) {
  std::ofstream f(file, std::ios::app);
  f << text;
}

class EnvVar {
public:
  EnvVar(const char *name, const std::string &value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~EnvVar() { ::unsetenv(name_); }

private:
  const char *name_;
};

} // namespace ptosim_test
