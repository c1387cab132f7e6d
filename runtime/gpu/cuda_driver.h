// The real Driver: libcuda loaded with dlopen (never linked), its entry points resolved into
// function pointers typed from cuda.h. Built only with the CUDA toolkit (RRT_HAVE_CUDA).
#pragma once

#include <memory>

#include "runtime/gpu/driver.h"

namespace rrt::gpu {

// Loads libcuda.so.1 and initialises it. nullptr (with *why set) when there is no driver
// library, it lacks an entry point, cuInit fails or no device is present.
std::unique_ptr<Driver> loadCudaDriver(Status* why, const char** reason);

}  // namespace rrt::gpu
