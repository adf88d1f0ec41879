// The rank supervisor: the process kolorun starts for each local rank,
// which starts the rank's program and stays its parent. kolorun runs
//   kolorun --internal-rank-supervisor /path/to/program args...
// in the rank's process group and environment, so signals kolorun sends to
// the group reach the program as before, and the supervisor exits as the
// program did (its code, or the same signal), so kolorun reports the rank
// unchanged.
//
// Why: a rank's program may start processes of its own, and some leave its
// process group (setsid, daemons). The supervisor is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so those become its children when their parent
// ends, and it kills every one of them when the program ends. Its parent-
// death signal fires when kolorun dies, SIGKILL included, and it then kills
// the program's whole tree; before, a rank's background processes outlived
// a kolorun killed with SIGKILL.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace kolo::runner {

inline constexpr const char* kRankSupervisorFlag = "--internal-rank-supervisor";

// What kolorun sends a supervisor's group instead of SIGKILL when a rank
// outlived its grace period: the supervisor kills the rank's whole tree,
// then itself with SIGKILL (a real-time signal, which also ends the rank
// unless it handles it; SIGKILL follows anyway).
int supervisor_kill_signal();

// `command`: the program (a path) and its arguments. Returns the exit code
// for kolorun; a rank killed by a signal is mirrored by raising it.
int run_rank_supervisor(const std::vector<std::string>& command);

// Sends SIGKILL to every descendant of this process and reaps them, again
// until none is left (the orphans of a killed process come back as
// children of a subreaper) or `limit` has passed.
void kill_descendants(std::chrono::milliseconds limit = std::chrono::seconds(5));

}  // namespace kolo::runner
