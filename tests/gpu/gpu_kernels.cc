// The device reduction kernels against the host kernels, on a GPU: every (op, datatype) the host
// table defines (long double aside), 1000 elements plus a ragged count, compared byte for byte.
// Links the runtime's internals. Exit 0 = pass, 77 = skipped (no GPU / driver / CUDA build).
#include <cstdio>
#include <cstring>
#include <vector>

#include <rrt/rrt.h>

#include "apps/common/device_mem.h"
#include "runtime/coll/op.h"
#include "runtime/core/datatype.h"
#include "runtime/gpu/gpu.h"

int main(int argc, char** argv) {
  if (rrt_init(&argc, &argv) != RRT_SUCCESS) return 1;
  const char* why = rrt::gpu::enabled() ? device_mem_open() : "rrt has no CUDA support here";
  if (why) {
    printf("SKIP: gpu_kernels: %s\n", why);
    rrt_finalize();
    return DEVICE_SKIP_EXIT;
  }
  int cases = 0, failures = 0, unsupported = 0;
  for (rrt_op_t op = RRT_SUM; op <= RRT_MAXLOC; ++op) {
    for (rrt_datatype_t t = 0; t < RRT_PREDEFINED_TYPE_COUNT; ++t) {
      if (t == RRT_LONG_DOUBLE || t == RRT_LONG_DOUBLE_INT) continue;
      rrt::coll::Kernel host = rrt::coll::kernelFor(op, t);
      if (!host) continue;
      const size_t ts = rrt::core::predefinedTypeSize(t);
      for (size_t n : {size_t{1000}, size_t{70001}}) {
        const size_t bytes = n * ts;
        std::vector<unsigned char> in(bytes), io(bytes), out(bytes);
        for (size_t i = 0; i < bytes; ++i) {
          in[i] = static_cast<unsigned char>((i * 13 + 5) % 7);
          io[i] = static_cast<unsigned char>((i * 29 + 3) % 5);
        }
        // Half types: keep the exponent sane (normal numbers).
        if (t == RRT_FLOAT16 || t == RRT_BFLOAT16)
          for (size_t i = 1; i < bytes; i += 2) in[i] = 0x3c, io[i] = 0x3f;
        void* din = device_mem_alloc(bytes);
        void* dio = device_mem_alloc(bytes);
        device_mem_from_host(din, in.data(), bytes);
        device_mem_from_host(dio, io.data(), bytes);
        rrt::Status st = rrt::gpu::driver()->reduce(op, t, din, dio, n, nullptr);
        host(in.data(), io.data(), n);
        device_mem_to_host(out.data(), dio, bytes);  // synchronises with the default stream
        device_mem_free(din);
        device_mem_free(dio);
        if (st == rrt::Status::ErrUnsupported) {
          ++unsupported;
          fprintf(stderr, "gpu_kernels: no device kernel for %s on type %d\n", rrt::coll::opName(op), t);
          break;
        }
        ++cases;
        if (st != rrt::Status::Ok || memcmp(out.data(), io.data(), bytes) != 0) {
          ++failures;
          fprintf(stderr, "gpu_kernels: %s on type %d, %zu elements: %s\n", rrt::coll::opName(op), t,
                  n, st == rrt::Status::Ok ? "differs from the host kernel" : rrt::statusName(st));
        }
      }
    }
  }
  printf("gpu_kernels: %d cases, %d failures, %d without a device kernel\n", cases, failures, unsupported);
  rrt_finalize();
  return failures || unsupported ? 1 : 0;
}
