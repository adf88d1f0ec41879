#include "core/autotune/tuned_params.h"

#include <fmt/format.h>

#include <cmath>
#include <span>

#include "common/byte_codec.h"
#include "common/error.h"

namespace kolo::core::autotune {
namespace {

constexpr uint8_t kVersion = 1;

const char* on_off(bool on) {
  return on ? "on" : "off";
}

}  // namespace

std::string encode_tuned_params(const TunedParams& p) {
  codec::Writer out;
  out.u8(kVersion);
  out.f64(p.fusion_threshold_mb);
  out.f64(p.cycle_time_ms);
  out.u8(static_cast<uint8_t>((p.cache_enabled ? 1 : 0) | (p.hierarchical_allreduce ? 2 : 0) |
                              (p.hierarchical_allgather ? 4 : 0) | (p.active ? 8 : 0)));
  const codec::Bytes bytes = out.take();
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

TunedParams decode_tuned_params(std::string_view bytes) {
  codec::Reader in(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  const uint8_t version = in.u8();
  TunedParams p;
  p.fusion_threshold_mb = in.f64();
  p.cycle_time_ms = in.f64();
  const uint8_t flags = in.u8();
  if (!in.ok() || version != kVersion || in.left() != 0 || flags > 15 ||
      !std::isfinite(p.fusion_threshold_mb) || p.fusion_threshold_mb < 0 ||
      !std::isfinite(p.cycle_time_ms) || p.cycle_time_ms <= 0)
    throw InvalidArgument(fmt::format("malformed autotune settings ({} bytes)", bytes.size()));
  p.cache_enabled = (flags & 1) != 0;
  p.hierarchical_allreduce = (flags & 2) != 0;
  p.hierarchical_allgather = (flags & 4) != 0;
  p.active = (flags & 8) != 0;
  return p;
}

std::string describe(const TunedParams& p) {
  return fmt::format(
      "fusion threshold {:.3g} MiB, cycle time {:.3g} ms, response cache {}, hierarchical "
      "allreduce {}, hierarchical allgather {}{}",
      p.fusion_threshold_mb, p.cycle_time_ms, on_off(p.cache_enabled),
      on_off(p.hierarchical_allreduce), on_off(p.hierarchical_allgather),
      p.active ? " (tuning)" : " (final)");
}

}  // namespace kolo::core::autotune
