# GPU support: which of the CUDA plugins (libkolo_cuda.so, libkolo_nccl.so)
# this build makes. libkolo never links CUDA or NCCL; the plugins do, and are
# dlopened at run time (src/gpu/), so one build runs with and without a GPU.
#
# KOLO_WITH_CUDA:
#   AUTO (default)  build the plugins when the CUDA toolkit (nvcc and the
#                   runtime) is found, and the NCCL plugin when NCCL is found
#                   too; anything missing is a STATUS line, never an error
#   ON              the same, but a missing toolkit or NCCL fails the configure
#   OFF             no GPU plugins (kolo.torch then says "built without GPU
#                   support" for a CUDA tensor)
# Sets KOLO_HAVE_CUDA and KOLO_HAVE_NCCL (0/1) for src/gpu, and
# KOLO_NCCL_INCLUDE_DIR / KOLO_NCCL_LIBRARY.
set(KOLO_WITH_CUDA "AUTO" CACHE STRING "Build the CUDA and NCCL plugins: AUTO, ON or OFF")
set_property(CACHE KOLO_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${KOLO_WITH_CUDA}" _kolo_with_cuda)
if(NOT _kolo_with_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "KOLO_WITH_CUDA must be AUTO, ON or OFF, not '${KOLO_WITH_CUDA}'")
endif()

set(KOLO_HAVE_CUDA 0)
set(KOLO_HAVE_NCCL 0)
if(NOT _kolo_with_cuda STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND CUDAToolkit_NVCC_EXECUTABLE AND TARGET CUDA::cudart_static)
    set(KOLO_HAVE_CUDA 1)
    get_filename_component(_kolo_cuda_root "${CUDAToolkit_LIBRARY_DIR}" DIRECTORY)
    find_path(KOLO_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(KOLO_NCCL_LIBRARY NAMES nccl
                 HINTS ${CUDAToolkit_LIBRARY_DIR} ${_kolo_cuda_root}/lib)
    if(KOLO_NCCL_INCLUDE_DIR AND KOLO_NCCL_LIBRARY)
      set(KOLO_HAVE_NCCL 1)
    endif()
  endif()
  if(_kolo_with_cuda STREQUAL "ON" AND NOT (KOLO_HAVE_CUDA AND KOLO_HAVE_NCCL))
    message(FATAL_ERROR "KOLO_WITH_CUDA=ON, but the CUDA toolkit (nvcc, cudart) or NCCL was "
                        "not found (CUDA: ${KOLO_HAVE_CUDA}, NCCL: ${KOLO_HAVE_NCCL}); set "
                        "CUDAToolkit_ROOT, or KOLO_WITH_CUDA=AUTO to build without it")
  endif()
endif()

if(KOLO_HAVE_CUDA)
  message(STATUS "CUDA ${CUDAToolkit_VERSION} found: building libkolo_cuda.so")
else()
  message(STATUS "CUDA toolkit not found (or KOLO_WITH_CUDA=OFF): no GPU plugins")
endif()
if(KOLO_HAVE_NCCL)
  message(STATUS "NCCL found (${KOLO_NCCL_LIBRARY}): building libkolo_nccl.so")
elseif(KOLO_HAVE_CUDA)
  message(STATUS "NCCL not found: libkolo_nccl.so is not built (CUDA tensors use the "
                 "host-staged path)")
endif()
