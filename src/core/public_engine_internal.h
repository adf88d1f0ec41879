// What the public kolo::Engine hides from users but tests and bindings need:
// building an Engine from an explicit Config (ranks as threads meeting in a
// shared store) and reaching the core engine behind it.
#pragma once

#include "core/config.h"
#include "core/engine.h"
#include "kolo/engine.h"

namespace kolo::internal {

struct EngineAccess {
  // Like kolo::Engine(InitOptions) with `config` instead of the environment;
  // options.store lets thread-ranks meet in one MemoryStore.
  static Engine create(const Config& config, core::EngineOptions options = {});
  static core::Engine& core_engine(Engine& engine) { return engine.core_engine(); }
};

}  // namespace kolo::internal
