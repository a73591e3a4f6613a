#include "support/python_source.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ast/json_reader.hpp"

namespace htp::test {

ast::Module parse_python(const std::string &source, const std::string &file) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "htp-src-XXXXXX").string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) std::abort();
  ::close(fd);
  std::ofstream(tmpl) << source;
  std::string cmd = std::string(HTP_PYTHON) + " -c \"import ast, json, sys; sys.path.insert(0, '" +
                    HTP_TEST_SOURCE_DIR + "/host/python/htp'); import _ast_json; "
                    "src = open(sys.argv[1]).read(); "
                    "print(json.dumps(_ast_json.to_json(ast.parse(src), sys.argv[2], source=src)))\" '" +
                    tmpl + "' '" + file + "'";
  FILE *p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = p ? ::pclose(p) : -1;
  fs::remove(tmpl);
  if (status != 0) {
    std::cerr << "parse_python: python failed (" << status << ")\n";
    std::abort();
  }
  auto m = ast::load_json(out);
  if (!m) {
    std::cerr << "parse_python: " << m.error().render() << '\n';
    std::abort();
  }
  return std::move(*m);
}

}  // namespace htp::test
