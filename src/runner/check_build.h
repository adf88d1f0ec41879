// kolorun --check-build: what this installation of Kolo can do, in
// horovodrun's layout ("[X] PyTorch" under "Available Frameworks", then
// "Available Controllers" and "Available Tensor Operations"), so scripts
// that grep horovodrun's output work. Nothing is fixed at build time: every
// line is probed here (build_probes.h), with the reason when it is missing.
#pragma once

#include <string>

namespace kolo::runner {

std::string check_build_report();

}  // namespace kolo::runner
