// Loads the NCCL plugin (libkolo_nccl.so) when a job's CUDA tensors go
// through NCCL (common/plugin_library.h says where it looks).
#pragma once

#include <string>
#include <string_view>

#include "gpu/nccl_plugin.h"

namespace kolo::gpu {

// The plugin's library object, or nullptr with the reason in *why_not
// (including "this Kolo was built without NCCL" when `built` is false; the
// real caller passes KOLO_HAVE_NCCL through nccl_library()).
NcclLibrary* load_nccl_plugin(std::string_view directory, bool built, std::string* why_not);

// This build's NCCL plugin from the default place.
NcclLibrary* nccl_library(std::string* why_not);

}  // namespace kolo::gpu
