// kolo._core.HandleGroup: the handles of one grouped call seen as one
// operation. A group of 200 gradients is then one Python object to make and
// keep and one wait, not 200 of each: that took the grouped 200 x 16 KB
// step from 1.08-1.16 to 0.96-1.02 ms (bench/torch_async_paths.py;
// docs/benchmarks-history.md, "Grouped allreduce as one HandleGroup").
//
// It has PyHandle's completion interface (is_completed, wait,
// wait_succeeded, check), so kolo.common.pending.PendingOperation holds it
// as its one handle. Grouped allreduce writes the caller's outputs, so there
// is no output to hand out.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <vector>

#include "kolo/engine.h"

namespace kolo::python {

class HandleGroup {
 public:
  explicit HandleGroup(std::vector<Handle> handles) : handles_(std::move(handles)) {}

  // True once every member finished (successfully or not).
  bool is_completed() const;
  // Waits for every member within `timeout_seconds` in all (none: no
  // limit); false if it passed first. Ctrl-C raises KeyboardInterrupt.
  bool wait(std::optional<double> timeout_seconds) const;
  // Waits without a limit; whether every member succeeded.
  bool wait_succeeded() const;
  // Raises KoloInternalError for the first member that failed; all must be
  // finished.
  void check() const;
  size_t size() const { return handles_.size(); }

 private:
  std::vector<Handle> handles_;
};

// Adds the HandleGroup class to the module.
void bind_handle_group(pybind11::module_& m);

}  // namespace kolo::python
