// The contract of every fuzz target in tests/fuzz/: one function in libFuzzer's form,
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
//
// that feeds the bytes to one parser of input from another process or from the user, and
// returns 0. It must not crash, hang, leak or touch memory outside its buffers for any input;
// checks that hold for every input are RRT_FUZZ_CHECKs (abort with a message: a finding).
//
// Built two ways (tests/fuzz/local.mk): with --enable-fuzzing as a libFuzzer program (clang
// -fsanitize=fuzzer), and always as a plain program with replay_main.cc that runs the target
// once per file named on its command line, which is how make check replays the corpus (seeds
// and the inputs of every crash found) under gcc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#define RRT_FUZZ_CHECK(cond)                                                            \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);     \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

namespace rrt::fuzz {

// Consumes the input front to back; reads past the end give zeros.
class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return pos_ >= n_; }
  size_t left() const { return pos_ < n_ ? n_ - pos_ : 0; }
  uint8_t u8() { return pos_ < n_ ? d_[pos_++] : 0; }
  // Little-endian. The two halves are read in separate statements: the operands of | are
  // unsequenced, and gcc (replay) and clang (libFuzzer) must read an input alike.
  uint16_t u16() {
    const uint16_t lo = u8();
    return static_cast<uint16_t>(lo | (u8() << 8));
  }
  uint32_t u32() {
    const uint32_t lo = u16();
    return lo | (static_cast<uint32_t>(u16()) << 16);
  }
  // Up to max bytes (fewer at the end): pointer into the input and the count taken.
  const uint8_t* bytes(size_t max, size_t* got) {
    *got = max < left() ? max : left();
    const uint8_t* p = d_ + pos_;
    pos_ += *got;
    return p;
  }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t pos_ = 0;
};

}  // namespace rrt::fuzz
