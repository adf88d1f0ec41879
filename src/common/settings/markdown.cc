#include "common/settings/markdown.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/settings/flags.h"
#include "common/settings/table.h"
#include "common/settings/value_text.h"

namespace kolo::settings {
namespace {

constexpr std::string_view kSectionMarker = "<!-- settings: ";
constexpr std::string_view kFlagsMarker = "<!-- settings-flags -->";
constexpr std::string_view kEndMarker = "<!-- /settings -->";

std::string code(std::string_view text) {
  return text.empty() ? "" : fmt::format("`{}`", text);
}

std::string default_text(const Spec& spec) {
  if (!spec.default_doc.empty()) return std::string(spec.default_doc);
  switch (spec.kind) {
    case Kind::kSeconds:
      return fmt::format("{} s", spec.fallback);
    case Kind::kMillis:
      return fmt::format("{} ms", spec.fallback);
    case Kind::kSize:
      return format_size(*parse_size(spec.fallback));
    case Kind::kBool:
    case Kind::kInt:
    case Kind::kNumber:
      return std::string(spec.fallback);
    default:
      return code(spec.fallback);
  }
}

std::string list_of(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) out += fmt::format("{}`{}`", out.empty() ? "" : ", ", name);
  return out;
}

std::string flag_value(const Spec& spec) {
  const FlagSpec& f = spec.flag;
  switch (f.form) {
    case FlagSpec::Form::kSwitch: {
      std::string text = fmt::format("`{}`; in the file `true` gives `{}`, `false` gives `{}`",
                                     value_from_switch(spec), value_from_file_switch(spec, true),
                                     value_from_file_switch(spec, false));
      if (!f.off_names.empty())
        text += fmt::format("; {} gives `{}`", list_of(off_flag_names(spec)),
                            value_from_off_switch(spec));
      if (!f.off_config_key.empty())
        text += fmt::format("; the key `{}` means the opposite", f.off_config_key);
      return text;
    }
    case FlagSpec::Form::kFirstOfList:
      return "the first of the list";
    case FlagSpec::Form::kValue:
      if (f.scale != 1) return fmt::format("{} × {}", f.value_name, format_number(f.scale));
      return std::string(f.value_name);
    case FlagSpec::Form::kNone:
      break;
  }
  return "";
}

std::string flag_spelling(const Spec& spec) {
  std::string out;
  for (std::string_view name : flag_names(spec)) {
    if (!out.empty()) out += ", ";
    out += spec.flag.form == FlagSpec::Form::kSwitch
               ? fmt::format("`{}`", name)
               : fmt::format("`{} {}`", name, spec.flag.value_name);
  }
  return out;
}

// Markdown table cells must not contain a bare '|'.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::vector<std::string_view> sections() {
  std::vector<std::string_view> out;
  for (const Spec& spec : kTable)
    if (std::find(out.begin(), out.end(), spec.section) == out.end()) out.push_back(spec.section);
  return out;
}

std::string section_table(std::string_view section) {
  std::string out = "| variable | alias | default | meaning |\n|---|---|---|---|\n";
  bool found = false;
  for (const Spec& spec : kTable) {
    if (spec.section != section) continue;
    found = true;
    out += fmt::format("| {} | {} | {} | {} |\n", code(spec.name), code(spec.alias),
                       cell(default_text(spec)), cell(spec.description));
  }
  if (!found) throw InvalidArgument(fmt::format("no settings in section '{}'", section));
  return out;
}

std::string flags_table() {
  std::string out = "| kolorun flag | config-file key | variable | value |\n|---|---|---|---|\n";
  for (const Spec& spec : kTable) {
    if (spec.flag.form == FlagSpec::Form::kNone) continue;
    out += fmt::format("| {} | {} | {} | {} |\n", flag_spelling(spec), code(spec.flag.config_key),
                       code(spec.name), cell(flag_value(spec)));
  }
  return out;
}

std::string regenerate(std::string_view page) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t section_at = page.find(kSectionMarker, pos);
    const size_t flags_at = page.find(kFlagsMarker, pos);
    const size_t start = std::min(section_at, flags_at);
    if (start == std::string_view::npos) break;
    const size_t line_end = page.find('\n', start);
    const size_t end = page.find(kEndMarker, start);
    if (line_end == std::string_view::npos || end == std::string_view::npos)
      throw InvalidArgument("docs/config.md: a generated block has no '<!-- /settings -->' end");
    std::string body;
    if (start == flags_at) {
      body = flags_table();
    } else {
      std::string_view header = page.substr(start, line_end - start);
      const size_t close = header.rfind(" -->");
      if (close == std::string_view::npos || close < kSectionMarker.size())
        throw InvalidArgument(fmt::format("docs/config.md: malformed marker '{}'", header));
      body = section_table(header.substr(kSectionMarker.size(), close - kSectionMarker.size()));
    }
    out.append(page.substr(pos, line_end + 1 - pos));
    out += body;
    pos = end;
  }
  out.append(page.substr(pos));
  return out;
}

}  // namespace kolo::settings
