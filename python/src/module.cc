// kolo._core: Engine and Handle of include/kolo/engine.h, seen from Python.
// Thin on purpose: argument conversion (DLPack views, option structs) and
// GIL handling live here; every decision lives in the engine or in the
// pure-Python packages.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dlpack_view.h"
#include "gpu_binding.h"
#include "kolo/engine.h"
#include "mpi_binding.h"
#include "operations_binding.h"
#include "parse_names.h"
#include "py_handle.h"
#include "raw_binding.h"
#include "settings_binding.h"
#include "status_to_python.h"
#include "tensorflow/tf_bridge.h"

namespace py = pybind11;

namespace kolo::python {
namespace {

std::vector<PyHandle> wrap(std::vector<Handle> handles, const std::vector<TensorView>& views) {
  std::vector<PyHandle> wrapped;
  wrapped.reserve(handles.size());
  for (size_t i = 0; i < handles.size(); ++i) {
    wrapped.emplace_back(std::move(handles[i]), views[i].tensor.dtype);
  }
  return wrapped;
}

std::vector<TensorView> views_of(const std::vector<py::object>& sources,
                                 const std::optional<std::string>& dtype) {
  std::vector<TensorView> views;
  views.reserve(sources.size());
  for (const auto& source : sources) views.push_back(view_of(source, dtype_from_name(dtype)));
  return views;
}

std::vector<Tensor> tensors_of(const std::vector<TensorView>& views) {
  std::vector<Tensor> tensors;
  tensors.reserve(views.size());
  for (const auto& view : views) tensors.push_back(view.tensor);
  return tensors;
}

ReduceOptions reduce_options(const std::string& op, double prescale, double postscale,
                             std::string name, int32_t process_set) {
  return {reduce_op_from_name(op), prescale, postscale, std::move(name), process_set};
}

void bind_engine(py::module_& m) {
  py::class_<Engine> engine(m, "Engine");
  engine
      .def(py::init([](std::vector<std::vector<int>> process_sets, std::vector<int> mpi_ranks,
                       uintptr_t mpi_comm_address, std::string survived_failure_report) {
             py::gil_scoped_release release;  // rendezvous blocks until peers arrive
             return Engine(InitOptions{std::move(process_sets), std::move(mpi_ranks),
                                       reinterpret_cast<const void*>(mpi_comm_address),
                                       std::move(survived_failure_report)});
           }),
           py::arg("process_sets") = std::vector<std::vector<int>>{},
           py::arg("mpi_ranks") = std::vector<int>{}, py::arg("mpi_comm_address") = 0,
           py::arg("survived_failure_report") = std::string())
      .def_property_readonly("backend", &Engine::backend_name)
      .def_property_readonly("rank", &Engine::rank)
      .def_property_readonly("size", &Engine::size)
      .def_property_readonly("local_rank", &Engine::local_rank)
      .def_property_readonly("local_size", &Engine::local_size)
      .def_property_readonly("elastic_round", &Engine::elastic_round)
      .def_property_readonly("elastic_hosts_seq", &Engine::elastic_hosts_seq)
      .def_property_readonly("elastic_newcomers", &Engine::elastic_newcomers)
      .def_property_readonly("standing_failure_report", &Engine::standing_failure_report)
      .def(
          "host_updates_since",
          [](const Engine& e, int64_t acked) {
            HostUpdates u;
            {
              py::gil_scoped_release release;  // a store round trip
              u = e.host_updates_since(acked);
            }
            // The bits of kolo.common.runtime.check_host_updates: 1 added, 2 removed.
            return py::make_tuple(u.seq, (u.added ? 1 : 0) | (u.removed ? 2 : 0));
          },
          py::arg("acked"))
      .def_property_readonly("cross_rank", &Engine::cross_rank)
      .def_property_readonly("cross_size", &Engine::cross_size)
      .def(
          "allreduce",
          [](Engine& e, const py::object& input, const py::object& output, const std::string& op,
             double prescale, double postscale, std::string name, int32_t process_set,
             std::optional<std::string> dtype) {
            TensorView in = view_of(input, dtype_from_name(dtype));
            TensorView out = view_of(output, dtype_from_name(dtype));
            return PyHandle(
                e.allreduce(in.tensor, out.mutable_data,
                            reduce_options(op, prescale, postscale, std::move(name), process_set)),
                in.tensor.dtype);
          },
          py::arg("input"), py::arg("output"), py::arg("op") = "average", py::arg("prescale") = 1.0,
          py::arg("postscale") = 1.0, py::arg("name") = "", py::arg("process_set") = 0,
          py::arg("dtype") = py::none())
      .def(
          "grouped_allreduce",
          [](Engine& e, const std::vector<py::object>& inputs,
             const std::vector<py::object>& outputs, const std::string& op, double prescale,
             double postscale, std::string name, int32_t process_set,
             std::optional<std::string> dtype) {
            auto in = views_of(inputs, dtype);
            auto out = views_of(outputs, dtype);
            std::vector<void*> out_ptrs;
            for (const auto& view : out) out_ptrs.push_back(view.mutable_data);
            return wrap(e.grouped_allreduce(
                            tensors_of(in), out_ptrs,
                            reduce_options(op, prescale, postscale, std::move(name), process_set)),
                        in);
          },
          py::arg("inputs"), py::arg("outputs"), py::arg("op") = "average",
          py::arg("prescale") = 1.0, py::arg("postscale") = 1.0, py::arg("name") = "",
          py::arg("process_set") = 0, py::arg("dtype") = py::none())
      .def(
          "allgather",
          [](Engine& e, const py::object& input, std::string name, int32_t process_set,
             std::optional<std::string> dtype) {
            TensorView in = view_of(input, dtype_from_name(dtype));
            return PyHandle(e.allgather(in.tensor, {std::move(name), process_set}),
                            in.tensor.dtype);
          },
          py::arg("input"), py::arg("name") = "", py::arg("process_set") = 0,
          py::arg("dtype") = py::none())
      .def(
          "grouped_allgather",
          [](Engine& e, const std::vector<py::object>& inputs, std::string name,
             int32_t process_set, std::optional<std::string> dtype) {
            auto in = views_of(inputs, dtype);
            return wrap(e.grouped_allgather(tensors_of(in), {std::move(name), process_set}), in);
          },
          py::arg("inputs"), py::arg("name") = "", py::arg("process_set") = 0,
          py::arg("dtype") = py::none())
      .def(
          "broadcast",
          [](Engine& e, const py::object& input, const py::object& output, int root,
             std::string name, int32_t process_set, std::optional<std::string> dtype) {
            TensorView in = view_of(input, dtype_from_name(dtype));
            TensorView out = view_of(output, dtype_from_name(dtype));
            return PyHandle(
                e.broadcast(in.tensor, out.mutable_data, {root, std::move(name), process_set}),
                in.tensor.dtype);
          },
          py::arg("input"), py::arg("output"), py::arg("root") = 0, py::arg("name") = "",
          py::arg("process_set") = 0, py::arg("dtype") = py::none())
      .def(
          "alltoall",
          [](Engine& e, const py::object& input, std::vector<int64_t> splits, std::string name,
             int32_t process_set, std::optional<std::string> dtype) {
            TensorView in = view_of(input, dtype_from_name(dtype));
            return PyHandle(
                e.alltoall(in.tensor, {std::move(splits), std::move(name), process_set}),
                in.tensor.dtype);
          },
          py::arg("input"), py::arg("splits") = std::vector<int64_t>{}, py::arg("name") = "",
          py::arg("process_set") = 0, py::arg("dtype") = py::none())
      .def(
          "reducescatter",
          [](Engine& e, const py::object& input, const std::string& op, double prescale,
             double postscale, std::string name, int32_t process_set,
             std::optional<std::string> dtype) {
            TensorView in = view_of(input, dtype_from_name(dtype));
            return PyHandle(
                e.reducescatter(in.tensor, reduce_options(op, prescale, postscale, std::move(name),
                                                          process_set)),
                in.tensor.dtype);
          },
          py::arg("input"), py::arg("op") = "average", py::arg("prescale") = 1.0,
          py::arg("postscale") = 1.0, py::arg("name") = "", py::arg("process_set") = 0,
          py::arg("dtype") = py::none())
      .def(
          "grouped_reducescatter",
          [](Engine& e, const std::vector<py::object>& inputs, const std::string& op,
             double prescale, double postscale, std::string name, int32_t process_set,
             std::optional<std::string> dtype) {
            auto in = views_of(inputs, dtype);
            return wrap(e.grouped_reducescatter(
                            tensors_of(in),
                            reduce_options(op, prescale, postscale, std::move(name), process_set)),
                        in);
          },
          py::arg("inputs"), py::arg("op") = "average", py::arg("prescale") = 1.0,
          py::arg("postscale") = 1.0, py::arg("name") = "", py::arg("process_set") = 0,
          py::arg("dtype") = py::none())
      .def(
          "barrier",
          [](Engine& e, int32_t process_set) {
            return PyHandle(e.barrier(process_set), DataType::kUInt8);
          },
          py::arg("process_set") = 0)
      .def(
          "join",
          [](Engine& e, int32_t process_set) {
            return PyHandle(e.join(process_set), DataType::kUInt8);
          },
          py::arg("process_set") = 0)
      .def(
          "add_process_set",
          [](Engine& e, std::vector<int> ranks) {
            return PyHandle(e.add_process_set(std::move(ranks)), DataType::kUInt8);
          },
          py::arg("ranks"))
      .def(
          "remove_process_set",
          [](Engine& e, int32_t id) {
            return PyHandle(e.remove_process_set(id), DataType::kUInt8);
          },
          py::arg("id"))
      .def(
          "allocate_output",
          [](Engine& e, std::vector<int64_t> shape, const std::string& dtype) {
            const DataType type = *dtype_from_name(dtype);
            int64_t elements = 1;
            for (int64_t d : shape) {
              if (d < 0) throw py::value_error("kolo: an output shape has no negative sizes");
              elements *= d;
            }
            const auto bytes = static_cast<size_t>(elements) * dtype_size(type);
            return DLPackArray(e.allocate_output(bytes), type, std::move(shape));
          },
          py::arg("shape"), py::arg("dtype"),
          "Memory for an out-of-place result, from the engine's output cache (see "
          "kolo::Engine::allocate_output); uninitialised.")
      .def_property_readonly("cached_output_bytes", &Engine::cached_output_bytes)
      .def("start_timeline", &Engine::start_timeline, py::arg("path"),
           py::arg("mark_cycles") = false)
      .def("stop_timeline", &Engine::stop_timeline)
      .def("shutdown", &Engine::shutdown, py::call_guard<py::gil_scoped_release>());
  bind_raw_operations(m, engine);
}

void bind_handle(py::module_& m) {
  py::class_<PyHandle> handle(m, "Handle");
  def_completion(handle)
      .def("output", &PyHandle::output)
      .def_property_readonly("received_splits", &PyHandle::received_splits)
      .def_property_readonly("value", &PyHandle::value);

  py::class_<DLPackArray>(m, "DLPackArray")
      .def("__dlpack__", &DLPackArray::dlpack, py::arg("stream") = py::none())
      .def("__dlpack_device__", &DLPackArray::dlpack_device)
      .def_property_readonly("shape", &DLPackArray::shape)
      .def_property_readonly("dtype", &DLPackArray::dtype_name);
}

}  // namespace
}  // namespace kolo::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "Kolo's engine, seen from Python (use kolo.torch or kolo.numpy instead)";
  kolo::python::register_exceptions(m);
  kolo::python::bind_engine(m);
  kolo::python::bind_handle(m);
  kolo::python::bind_settings(m);
  kolo::python::bind_operations(m);
  kolo::python::bind_mpi(m);
  kolo::python::bind_gpu(m);
  kolo::python::tf::bind_tensorflow(m);
}
