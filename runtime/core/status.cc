#include "runtime/core/status.h"

namespace rrt {

const char* statusName(Status s) {
  switch (s) {
    case Status::InProgress: return "in progress";
    case Status::NoResource: return "no resource (retry later)";
    default: return rrt_strerror(static_cast<int>(s));
  }
}

}  // namespace rrt
