// htp_ptosim_pch <data dir>: precompiles the simulator headers every pto-a2a3sim kernel (AIV and AIC flag sets)
// and every orchestration starts with, for the compiler the binding uses by default ($CXX, else c++), into
// <data dir>/pch/<key>/ next to <data dir>/include. The binding reads them from there before its user cache
// (sim_run.cpp: use_prebuilt), so a first run in an empty cache compiles its kernels without first building
// these. A compiler that cannot precompile them leaves nothing (a warning); the binding then builds its own.
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "build_cache.hpp"
#include "run_support.hpp"
#include "sim_run.hpp"

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: htp_ptosim_pch <htp-backend-pto.data/ptosim>\n");
    return 2;
  }
  namespace fs = std::filesystem;
  using namespace htp_ptosim;
  const fs::path data = fs::absolute(argv[1]);
  try {
    BuildCache cache(data.string(), compiler_name(nlohmann::json::object()), (data / "include").string());
    const std::vector<CompileJob> jobs = {kernel_job(CoreType::AIV, "", "AIV kernel"),
                                          kernel_job(CoreType::AIC, "", "AIC kernel"),
                                          orchestration_job("", "orchestration")};
    std::set<std::string> current;
    for (const CompileJob &job : jobs) {
      const std::string header = cache.precompile(job);
      if (header.empty())
        std::fprintf(stderr, "htp_ptosim_pch: warning: could not precompile the %s headers (see %s/pch/*.log)\n",
                     job.label.c_str(), data.c_str());
      else
        current.insert(fs::path(header).parent_path().filename().string());
    }
    // What earlier headers or flags left (about 40 MB each): only the current keys are read. Kept when one
    // failed, for its log.
    std::error_code ec;
    if (current.size() == jobs.size())
      for (const auto &entry : fs::directory_iterator(data / "pch", ec)) {
        const std::string name = entry.path().filename().string();
        if (!current.count(name.substr(0, name.find('.')))) fs::remove_all(entry.path(), ec);
      }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "htp_ptosim_pch: warning: %s\n", e.what());
  }
  return 0;
}
