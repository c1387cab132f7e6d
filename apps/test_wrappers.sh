#!/bin/sh
# The compiler wrappers rrtcc and rrtcxx: their flags in the build tree, then, installed with
# DESTDIR into a temporary tree, that they find that tree and build programs against it
# (apps/examples/hello.c with rrtcc, a user of rrt.hpp with rrtcxx) which then run as one rank.
set -eu
: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { # expect WHAT ACTUAL EXPECTED
  [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

cc_wrapper=$top_builddir/apps/rrtcc
cxx_wrapper=$top_builddir/apps/rrtcxx

# ---- flags, in the build tree ---------------------------------------------------------------
compile=$("$cc_wrapper" --showme:compile)
link=$("$cc_wrapper" --showme:link)
case $compile in -I/*) ;; *) fail "--showme:compile gives '$compile'" ;; esac
libdir=${link#-L}; libdir=${libdir%% *}
# A sanitizer build adds its runtime (tests/local.mk passes the flags as RRT_SAN_LDFLAGS).
san=${RRT_SAN_LDFLAGS:-}
expect "--showme:link" "$link" "-L$libdir -Wl,-rpath,$libdir -lrrt${san:+ $san}"
expect "rrtcxx --showme:compile" "$("$cxx_wrapper" --showme:compile)" "$compile -std=gnu++17"
expect "--showme with RRT_CC" "$(RRT_CC=mycc "$cc_wrapper" --showme x.c -o x)" \
  "mycc $compile x.c -o x $link"
expect "--showme -c (no link flags)" "$(RRT_CC=mycc "$cc_wrapper" --showme -c x.c)" \
  "mycc $compile -c x.c"
expect "rrtcxx --showme with RRT_CXX" "$(RRT_CXX=myc++ "$cxx_wrapper" --showme y.cc)" \
  "myc++ $compile -std=gnu++17 y.cc $link"

# ---- installed into a temporary tree --------------------------------------------------------
dest=$tmp/dest
make -s -C "$top_builddir" install-libLTLIBRARIES install-rrtincludeHEADERS install-binSCRIPTS \
  DESTDIR="$dest" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "make install"; }
installed_cc=$(find "$dest" -path '*/bin/rrtcc' | head -n 1)
installed_cxx=$(find "$dest" -path '*/bin/rrtcxx' | head -n 1)
[ -x "$installed_cc" ] && [ -x "$installed_cxx" ] || fail "wrappers not installed"
case $("$installed_cc" --showme:compile) in
  "-I$dest"/*) ;; *) fail "installed rrtcc does not find its tree: $("$installed_cc" --showme:compile)" ;;
esac

"$installed_cc" -o "$tmp/hello" "$top_srcdir/apps/examples/hello.c" || fail "rrtcc hello.c"
cat >"$tmp/user.cc" <<'CXX'
#include <rrt/rrt.hpp>
#include <cstdio>
#include <vector>
int main(int argc, char** argv) {
  rrt::Environment env(argc, argv);
  rrt::Comm world = env.world();
  std::vector<int> out{1, 2, 3}, in(3);
  rrt::Request r = world.irecv(in, world.rank(), 5);
  world.send(out, world.rank(), 5);
  rrt::Status s = r.wait();
  std::printf("%zu %d\n", s.count<int>(), in[0] + in[1] + in[2]);
  return 0;
}
CXX
"$installed_cxx" -o "$tmp/user" "$tmp/user.cc" || fail "rrtcxx user.cc"

# Both run as a world of one rank, without a launcher.
out=$("$tmp/hello") || fail "hello exits with $?"
case $out in "Hello from rank 0 of 1 on "*) ;; *) fail "hello prints '$out'" ;; esac
expect "rrt.hpp self message" "$("$tmp/user")" "3 6"
echo "PASS: rrtcc/rrtcxx"
