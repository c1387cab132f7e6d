// Runs the shared point-to-point frame (pt2pt_driver.h) on rrt's RRT_COMM_WORLD.
#ifndef RRT_APPS_COMMON_RRT_PT2PT_MAIN_H
#define RRT_APPS_COMMON_RRT_PT2PT_MAIN_H

#include "pt2pt_driver.h"
#include "rrt_check.h"

namespace rrt::apps {

// rrt_init, pt2pt_main, rrt_finalize; returns the process exit code. Point-to-point calls only,
// so these apps run before rrt has collectives.
int pt2ptMain(int argc, char** argv, const pt2pt_bench& bench);

}  // namespace rrt::apps

#endif  // RRT_APPS_COMMON_RRT_PT2PT_MAIN_H
