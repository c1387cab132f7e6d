// The reduction kernels of the architecture's baseline (kernel_loops.h), and the choice between
// them and a build for a wider instruction set that the CPU runs (kernels_avx2.cc): made once,
// at the first lookup, from the CPU's features and RRT_KERNELS.
#include "runtime/coll/kernel_loops.h"

#include <strings.h>

#include "rrt_config.h"

#ifdef RRT_HAVE_AVX2_KERNELS
#include <cpuid.h>
#endif

#include "runtime/core/config.h"
#include "runtime/core/log.h"

namespace rrt::coll {

#ifdef RRT_HAVE_AVX2_KERNELS
Kernel kernelTableAvx2(rrt_op_t op, rrt_datatype_t t);
#endif

namespace {

// Asked once: CPUID traps to the hypervisor in a virtual machine (about 10 us a call here,
// which a lookup per collective call paid before this was cached).
bool cpuHasAvx2() {
#ifdef RRT_HAVE_AVX2_KERNELS
  // The builtin also checks that the OS saves the YMM registers; clang's knows no "f16c".
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
#else
  return false;
#endif
}

bool cpuRuns(KernelIsa isa) {
  static const bool avx2 = cpuHasAvx2();
  return isa == KernelIsa::Baseline || (isa == KernelIsa::Avx2 && avx2);
}

KernelIsa chooseIsa() {
  const KernelIsa best = cpuRuns(KernelIsa::Avx2) ? KernelIsa::Avx2 : KernelIsa::Baseline;
  const std::string& v = config::value(config::Tunable::Kernels);
  if (v.empty() || strcasecmp(v.c_str(), "auto") == 0) return best;
  for (KernelIsa isa : {KernelIsa::Baseline, KernelIsa::Avx2}) {
    if (strcasecmp(v.c_str(), kernelIsaName(isa)) != 0) continue;
    if (cpuRuns(isa)) return isa;
    RRT_WARN("RRT_KERNELS=%s: not built or not run by this CPU; using %s", v.c_str(), kernelIsaName(best));
    return best;
  }
  RRT_WARN("RRT_KERNELS=%s: not one of auto, baseline, avx2; using %s", v.c_str(), kernelIsaName(best));
  return best;
}

}  // namespace

const char* kernelIsaName(KernelIsa isa) { return isa == KernelIsa::Avx2 ? "avx2" : "baseline"; }

KernelIsa kernelIsa() {
  static const KernelIsa isa = chooseIsa();
  return isa;
}

Kernel kernelFor(KernelIsa isa, rrt_op_t op, rrt_datatype_t t) {
  if (!cpuRuns(isa)) return nullptr;
#ifdef RRT_HAVE_AVX2_KERNELS
  if (isa == KernelIsa::Avx2) return kernelTableAvx2(op, t);
#endif
  return kernelTable(op, t);
}

Kernel kernelFor(rrt_op_t op, rrt_datatype_t t) { return kernelFor(kernelIsa(), op, t); }

float halfToFloat(uint16_t h) { return h2f(h); }
uint16_t floatToHalf(float f) { return f2h(f); }
float bf16ToFloat(uint16_t h) { return b2f(h); }
uint16_t floatToBf16(float f) { return f2b(f); }

}  // namespace rrt::coll
