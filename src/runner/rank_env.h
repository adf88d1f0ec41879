// The environment each rank starts with: the launcher's (less what belongs
// to this login session, for remote ranks), the engine settings, -x
// variables, and last the rank layout and rendezvous variables, which
// nothing overrides. Horovod's HOROVOD_* names are set beside Kolo's
// because user scripts read them.
#pragma once

#include <string>

#include "runner/launch_options.h"
#include "runner/process.h"
#include "runner/rank_layout.h"

namespace kolo::runner {

struct RendezvousEndpoint {
  std::string address;
  int port = 0;
  std::string secret;
};

// The launcher's environment without variables that describe this login
// session or terminal (HOME, USER, SSH_*, DISPLAY, TERM, ...): the remote
// login provides its own.
Environment forwardable_environment(const Environment& launcher_env);

Environment rank_environment(const Environment& base, const RankSlot& slot,
                             const RendezvousEndpoint& rendezvous, const LaunchOptions& options);

}  // namespace kolo::runner
