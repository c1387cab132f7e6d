// What only the installed library carries: its identity, for `strings librrt.so | grep rrt`.
#include <rrt/rrt.h>

extern "C" const char rrt_library_version[] = "rrt " "0.1.0";
