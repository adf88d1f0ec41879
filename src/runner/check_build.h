// kolorun --check-build: what this build of Kolo can do, in horovodrun's
// layout ("[X] TCP"). The launcher does not link the engine, so the list is
// fixed when the build is configured (KOLO_BUILD_FEATURES from CMake) plus
// what can be seen on this machine at run time (ssh for remote hosts).
#pragma once

#include <string>

namespace kolo::runner {

std::string check_build_report();

}  // namespace kolo::runner
