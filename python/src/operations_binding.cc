#include "operations_binding.h"

#include <string>

#include "core/operation_table.h"

namespace kolo::python {
namespace {

std::string output_name(core::OutputBuffer output) {
  switch (output) {
    case core::OutputBuffer::kNone:
      return "none";
    case core::OutputBuffer::kCaller:
      return "caller";
    case core::OutputBuffer::kEngine:
      return "engine";
  }
  return "unknown";
}

std::string first_dimension_name(core::FirstDimension first_dimension) {
  switch (first_dimension) {
    case core::FirstDimension::kAny:
      return "any";
    case core::FirstDimension::kRequired:
      return "required";
    case core::FirstDimension::kVariesPerRank:
      return "varies_per_rank";
  }
  return "unknown";
}

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
          entry["output"] = output_name(operation.output);
          entry["first_dimension"] = first_dimension_name(operation.first_dimension);
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
