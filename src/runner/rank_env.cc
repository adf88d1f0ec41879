#include "runner/rank_env.h"

#include <array>
#include <string_view>

namespace kolo::runner {
namespace {

bool session_specific(const std::string& name) {
  static constexpr std::array<std::string_view, 24> kExact = {"HOSTNAME",
                                                              "HOME",
                                                              "USER",
                                                              "LOGNAME",
                                                              "SHELL",
                                                              "PWD",
                                                              "OLDPWD",
                                                              "SHLVL",
                                                              "_",
                                                              "TERM",
                                                              "TERMCAP",
                                                              "DISPLAY",
                                                              "MAIL",
                                                              "LS_COLORS",
                                                              "TMUX",
                                                              "TMUX_PANE",
                                                              "STY",
                                                              "WINDOW",
                                                              "COLUMNS",
                                                              "LINES",
                                                              "XAUTHORITY",
                                                              "DBUS_SESSION_BUS_ADDRESS",
                                                              "PROMPT_COMMAND",
                                                              "MOTD_SHOWN"};
  static constexpr std::array<std::string_view, 3> kPrefixes = {"SSH_", "XDG_", "BASH_FUNC_"};
  for (auto e : kExact)
    if (name == e) return true;
  for (auto p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

Environment forwardable_environment(const Environment& launcher_env) {
  Environment out;
  for (const auto& [k, v] : launcher_env)
    if (!session_specific(k)) out[k] = v;
  return out;
}

Environment rank_environment(const Environment& base, const RankSlot& slot,
                             const RendezvousEndpoint& rendezvous, const LaunchOptions& options) {
  Environment env = base;
  for (const auto& [k, v] : options.settings) env[k] = v;
  for (const auto& [k, v] : options.extra_env) env[k] = v;
  for (const char* prefix : {"KOLO_", "HOROVOD_"}) {
    const std::string p(prefix);
    env[p + "RANK"] = std::to_string(slot.rank);
    env[p + "SIZE"] = std::to_string(slot.size);
    env[p + "LOCAL_RANK"] = std::to_string(slot.local_rank);
    env[p + "LOCAL_SIZE"] = std::to_string(slot.local_size);
    env[p + "CROSS_RANK"] = std::to_string(slot.cross_rank);
    env[p + "CROSS_SIZE"] = std::to_string(slot.cross_size);
    env[p + "HOSTNAME"] = slot.host;
  }
  env["KOLO_RENDEZVOUS_ADDR"] = rendezvous.address;
  env["KOLO_RENDEZVOUS_PORT"] = std::to_string(rendezvous.port);
  env["KOLO_SECRET"] = rendezvous.secret;
  return env;
}

}  // namespace kolo::runner
