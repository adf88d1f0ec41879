#include "operations_binding.h"

#include <array>
#include <string>

#include "core/operation_table.h"

namespace kolo::python {
namespace {

// In the order of the enums' values.
constexpr std::array<const char*, 3> kOutputNames = {"none", "caller", "engine"};
constexpr std::array<const char*, 3> kFirstDimensionNames = {"any", "required", "varies_per_rank"};

}  // namespace

void bind_operations(pybind11::module_& m) {
  m.def(
      "operations",
      [] {
        pybind11::list operations;
        for (const auto& operation : core::kOperations) {
          pybind11::dict entry;
          entry["name"] = std::string(operation.name);
          entry["moves_data"] = operation.moves_data;
          entry["reduces"] = operation.reduces;
          entry["output"] = kOutputNames.at(static_cast<size_t>(operation.output));
          entry["first_dimension"] =
              kFirstDimensionNames.at(static_cast<size_t>(operation.first_dimension));
          entry["fusable"] = operation.fusable;
          entry["cacheable"] = operation.cacheable;
          entry["runs_on_joined_rank"] = operation.runs_on_joined_rank;
          entry["has_root"] = operation.has_root;
          entry["changes_process_sets"] = operation.changes_process_sets;
          operations.append(std::move(entry));
        }
        return operations;
      },
      "The engine's operations in OpType order, one dict of properties each.");
}

}  // namespace kolo::python
