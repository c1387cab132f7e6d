// Runs the shared collective driver (coll_driver.h) on rrt's RRT_COMM_WORLD.
#ifndef RRT_APPS_COMMON_RRT_COLL_MAIN_H
#define RRT_APPS_COMMON_RRT_COLL_MAIN_H

#include "coll_driver.h"
#include "rrt_check.h"

namespace rrt::apps {

// rrt_init, coll_main, rrt_finalize; returns the process exit code.
int collMain(int argc, char** argv, const coll_bench& bench);

}  // namespace rrt::apps

#endif  // RRT_APPS_COMMON_RRT_COLL_MAIN_H
