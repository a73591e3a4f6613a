#include "wsp_test_support.hpp"

#include <fstream>
#include <sstream>

namespace wsp_test {

htp::test::CommandResult compile(const std::filesystem::path &program, const std::filesystem::path &out,
                                 const std::string &target, const std::vector<std::string> &extra) {
  std::vector<std::string> args = {"--plugins", HTP_WSP_PLUGIN,   "--plugins", HTP_TILE_PLUGIN,
                                   "--plugins", HTP_CHECK_PLUGIN, "compile",   program.string(),
                                   "--target",  target,           "-o",        out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return htp::test::run_host(args);
}

std::string read_file(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path program(const std::string &name) {
  return std::filesystem::path(HTP_WSP_TEST_DIR) / "programs" / name;
}

} // namespace wsp_test
