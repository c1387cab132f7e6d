#include "runtime/transport/shm/copy_path.h"

#include "runtime/core/config.h"
#include "runtime/core/log.h"

namespace rrt::transport::shm {

CopyProfile copyProfile() {
  const std::string& v = config::value(config::Tunable::ShmCopyPath);
  if (v == "rings") return CopyProfile::Rings;
  if (v == "cma") return CopyProfile::Cma;
  if (v != "auto") RRT_WARN("RRT_SHM_COPY_PATH=%s: not rings, cma or auto; using auto", v.c_str());
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_is("intel") ? CopyProfile::Cma : CopyProfile::Rings;
#else
  return CopyProfile::Rings;
#endif
}

}  // namespace rrt::transport::shm
