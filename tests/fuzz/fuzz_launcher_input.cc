// Fuzzes what kolorun reads from users and from the wire: the first byte
// picks the decoder (host list, hostfile, YAML config file, remote-exec
// request, command line), the rest is its input. Bad input must end in
// InvalidArgument, never a crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "runner/cli.h"
#include "runner/hosts.h"
#include "runner/rank_layout.h"
#include "runner/remote_exec.h"
#include "runner/setting_flags.h"

namespace {

std::vector<std::string> split_args(const std::string& text) {
  std::vector<std::string> args;
  std::string current;
  for (char c : text) {
    if (c == '\0') {
      args.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  args.push_back(current);
  return args;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kolo::runner;
  if (size < 1 || size > 1 << 16) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 5) {
      case 0:
        assign_ranks(parse_host_list(input), 4);
        break;
      case 1:
        assign_ranks(parse_hostfile_text(input, "fuzz"), 3);
        break;
      case 2:
        parse_config_text(input, "fuzz");
        break;
      case 3:
        decode_remote_request(input);
        break;
      case 4: {
        auto args = split_args(input);
        for (const auto& a : args)
          if (a.find('/') != std::string::npos)
            return 0;  // no file reads (/dev/zero would never end)
        parse_command_line(args, {{"HOME", "/root"}});
        break;
      }
    }
  } catch (const kolo::InvalidArgument&) {
    // The expected answer to bad input.
  }
  return 0;
}
