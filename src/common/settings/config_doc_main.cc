// kolo-config-doc PAGE: rewrites the generated tables of docs/config.md from
// the settings table (settings/markdown.h). `--check` only says whether the
// page is current (exit 1 if not), as the unit test does.
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/error.h"
#include "common/settings/markdown.h"

int main(int argc, char** argv) {
  const bool check = argc == 3 && std::string(argv[1]) == "--check";
  if (argc != 2 && !check) {
    fmt::print(stderr, "usage: kolo-config-doc [--check] docs/config.md\n");
    return 2;
  }
  const std::string path = argv[argc - 1];
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "kolo-config-doc: cannot read {}\n", path);
    return 2;
  }
  std::stringstream page;
  page << in.rdbuf();
  try {
    const std::string updated = kolo::settings::regenerate(page.str());
    if (check) return updated == page.str() ? 0 : 1;
    std::ofstream(path) << updated;
  } catch (const kolo::InvalidArgument& e) {
    fmt::print(stderr, "kolo-config-doc: {}\n", e.what());
    return 2;
  }
  return 0;
}
