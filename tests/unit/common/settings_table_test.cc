// The settings table itself: entries that cannot contradict each other, the
// docs page generated from it, and no setting read anywhere but through it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/settings/flags.h"
#include "common/settings/markdown.h"
#include "common/settings/table.h"
#include "common/settings/value_text.h"
#include "common/settings/values.h"

namespace kolo::settings {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = KOLO_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SettingsTable, NamesFlagsAndKeysAreUniqueAndWellFormed) {
  std::set<std::string_view> names, flags, keys;
  for (const Spec& spec : kTable) {
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(spec.name.substr(0, 5), "KOLO_");
    EXPECT_TRUE(names.insert(spec.name).second) << "declared twice";
    if (!spec.alias.empty()) {
      EXPECT_EQ(spec.alias.substr(0, 8), "HOROVOD_");
      EXPECT_TRUE(names.insert(spec.alias).second) << "alias used twice";
    }
    EXPECT_FALSE(spec.section.empty());
    EXPECT_FALSE(spec.description.empty());
    // The docs never show an empty default.
    EXPECT_TRUE(!spec.fallback.empty() || !spec.default_doc.empty());
    if (spec.kind == Kind::kChoice) {
      EXPECT_FALSE(spec.choices.empty());
    }
    if (spec.kind == Kind::kName) {
      EXPECT_TRUE(std::isfinite(spec.range.max));
    }
    if (spec.flag.form == FlagSpec::Form::kNone) continue;
    std::vector<std::string_view> spellings = flag_names(spec);
    for (std::string_view off : off_flag_names(spec)) spellings.push_back(off);
    for (std::string_view flag : spellings) {
      EXPECT_EQ(flag.substr(0, 2), "--");
      EXPECT_TRUE(flags.insert(flag).second) << flag << " used twice";
    }
    if (spec.flag.form == FlagSpec::Form::kSwitch) {
      // A switch sets 1 or 0: a boolean, or a choice that has both.
      EXPECT_TRUE(spec.kind == Kind::kBool || spec.kind == Kind::kChoice) << spec.name;
      EXPECT_NE(value_from_switch(spec), value_from_off_switch(spec)) << spec.name;
    } else {
      EXPECT_TRUE(spec.flag.off_names.empty()) << spec.name;
    }
    if (!spec.flag.off_config_key.empty()) {
      EXPECT_TRUE(keys.insert(spec.flag.off_config_key).second);
    }
    if (spec.flag.scale != 1) {
      EXPECT_TRUE(spec.kind == Kind::kSize || spec.kind == Kind::kInt);
    }
    if (!spec.flag.config_key.empty()) {
      EXPECT_NE(spec.flag.config_key.find('.'), std::string_view::npos);
      EXPECT_TRUE(keys.insert(spec.flag.config_key).second);
    }
  }
}

TEST(SettingsTable, EveryDefaultPassesItsOwnChecks) {
  for (const Spec& spec : kTable) {
    if (!spec.fallback.empty()) {
      EXPECT_NO_THROW(parse_value(spec, spec.name, spec.fallback));
    }
  }
  EXPECT_NO_THROW(Values());
}

TEST(SettingsTable, ConfigPageMatchesTheTable) {
  const std::string page = read_file(kSource / "docs/config.md");
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(regenerate(page), page)
      << "docs/config.md differs from common/settings/table.h: run "
         "build/bin/kolo-config-doc docs/config.md and commit the result";
  for (std::string_view section : sections())
    EXPECT_NE(page.find(fmt::format("<!-- settings: {} -->", section)), std::string::npos)
        << "docs/config.md has no table for section '" << section << "'";
  EXPECT_NE(page.find("<!-- settings-flags -->"), std::string::npos);
}

// Files that may call getenv, and why; every other read of the environment
// goes through settings::Values (or the runner's copy of the whole
// environment it forwards to ranks).
const std::set<std::string> kGetenvAllowed = {
    "src/common/settings/values.cc",           // the registry itself
    "src/runner/check_build.cc",               // PATH, to find programs
    "bench/startup/kolo_first_collective.cc",  // LAUNCH_START_NS, the bench's own clock
    "bench/startup/mpi_first_collective.cc",   // the same, for the MPI program
};

// A Python line that reads the environment: os.environ.get/pop, os.getenv,
// `in os.environ`, or os.environ[...] not assigned to. (Plain string search:
// std::regex trips GCC 12's maybe-uninitialized warning in the ASan build.)
bool reads_environment(std::string_view line) {
  for (std::string_view form :
       {"os.environ.get(", "os.getenv(", "os.environ.pop(", "in os.environ"})
    if (line.find(form) != std::string_view::npos) return true;
  const size_t at = line.find("os.environ[");
  if (at == std::string_view::npos) return false;
  const size_t close = line.find(']', at);
  if (close == std::string_view::npos) return true;
  std::string_view rest = line.substr(close + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return !(rest.starts_with("=") && !rest.starts_with("=="));
}

// Whether the line names a setting: KOLO_..., HOROVOD_..., or a constant
// holding one (ADDRESS_ENV).
bool names_a_setting(std::string_view line) {
  if (line.find("KOLO_") != std::string_view::npos) return true;
  if (line.find("HOROVOD_") != std::string_view::npos) return true;
  for (size_t at = line.find("_ENV"); at != std::string_view::npos;
       at = line.find("_ENV", at + 1)) {
    const size_t end = at + 4;
    if (end == line.size() ||
        !(std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_'))
      return true;
  }
  return false;
}

TEST(SettingsTable, TheSourceScanSeesEnvironmentReads) {
  EXPECT_TRUE(reads_environment(R"(x = os.environ.get("KOLO_RANK", "0"))"));
  EXPECT_TRUE(reads_environment(R"(x = os.environ["KOLO_RANK"])"));
  EXPECT_TRUE(reads_environment(R"(if os.environ["A"] == "1":)"));
  EXPECT_FALSE(reads_environment(R"(os.environ["KOLO_RANK"] = "1")"));
  EXPECT_TRUE(names_a_setting("os.environ.pop(SECRET_ENV, None)"));
  EXPECT_FALSE(names_a_setting("os.environ.pop(name, None)"));
  EXPECT_FALSE(names_a_setting("x = ENVIRONMENT"));
}

TEST(SettingsTable, NothingReadsASettingOutsideTheRegistry) {
  std::vector<std::string> offenders;
  for (const char* top : {"src", "include", "python", "bench", "examples"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kSource / top)) {
      if (!entry.is_regular_file()) continue;
      const std::string rel = fs::relative(entry.path(), kSource).string();
      const std::string ext = entry.path().extension().string();
      const std::string text = read_file(entry.path());
      if (ext == ".cc" || ext == ".h") {
        if (text.find("getenv") != std::string::npos && !kGetenvAllowed.count(rel))
          offenders.push_back(rel + ": calls getenv");
      } else if (ext == ".py" || entry.path().filename() == "compare") {
        std::istringstream lines(text);
        std::string line;
        for (int n = 1; std::getline(lines, line); ++n)
          if (reads_environment(line) && names_a_setting(line))
            offenders.push_back(fmt::format("{}:{}: {}", rel, n, line));
      }
    }
  }
  EXPECT_TRUE(offenders.empty()) << "read these through the settings registry "
                                    "(settings::Values, or kolo.common.settings in Python):\n"
                                 << fmt::format("{}", fmt::join(offenders, "\n"));
}

}  // namespace
}  // namespace kolo::settings
