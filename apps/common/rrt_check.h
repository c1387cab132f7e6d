// The rrt side of every microbenchmark: errors reported with rrt_strerror, the program's title,
// and the -T type mapping. Uses point-to-point-free calls only, so any app may link it.
#ifndef RRT_APPS_COMMON_RRT_CHECK_H
#define RRT_APPS_COMMON_RRT_CHECK_H

#include <rrt/rrt.h>

#include "options.h"

namespace rrt::apps {

// Names the program in error messages.
void setProgram(const char* program);

// On failure prints "<program>: <what> failed: <rrt_strerror>" and ends the whole job.
void check(int rc, const char* what);

// "rrt <test> v<major>.<minor>", e.g. title("Latency Test") is "rrt Latency Test v0.1".
const char* title(const char* test);

rrt_datatype_t rrtType(bench_dtype dtype);

// -d cuda: nullptr when rrt takes device buffers here and device memory can be allocated, else
// why not (the benchmark prints it and exits with DEVICE_SKIP_EXIT).
const char* deviceUnavailable();

}  // namespace rrt::apps

#endif  // RRT_APPS_COMMON_RRT_CHECK_H
