// Loud failure for the software RDMA device (tests/softrdma).
// Contract: both functions print "softrdma: <function>: <message>" on stderr and abort; they are
// the only way this library refuses something it does not model (never a silent stub).
#pragma once

namespace rrt::tests::softrdma {

[[noreturn]] void die(const char* function, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// A verbs entry point, opcode or option this device does not implement.
[[noreturn]] void unimplemented(const char* function);

}  // namespace rrt::tests::softrdma
