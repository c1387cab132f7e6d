#!/bin/sh
# Builds the Soft-RoCE guest's initramfs (an uncompressed newc cpio archive).
#
#   initramfs.sh OUT KERNEL_DIR BUILDDIR SRCDIR CONF
#
# KERNEL_DIR is what kernel.sh prepared (modules + load-order). The archive holds:
#   /init                    tests/softroce/guest_init.sh, PID 1 of the guest
#   /softroce/conf           CONF (shell assignments the init script reads)
#   /lib/modules/*.ko        the kernel modules, /lib/modules/load-order their insmod order
#   busybox (its applets are installed at boot), bash (tests/mp/run_testlist.sh is a bash script)
#   rdma-core: ibv_* tools, rping, perftest, iproute2's rdma, the rxe provider and its .driver file
#   OpenPMIx's component tree (plugins, help texts), read at run time by libpmix
#   /rrt: the built rrt, laid out like the build tree (rrun, apps/, tests/mp/ with every test
#         program, coll_check included, tests/mpi/), libtool wrappers replaced by the real ELF
#         files, debug info stripped; librrt*.so in /rrt/lib
#   every shared library any of those ELF files needs, at the path ldd resolves on this host.
# Nothing of tests/softrdma (our stand-in libibverbs.so.1) goes in: the guest uses the real one.
set -u
out=${1:?usage: initramfs.sh OUT KERNEL_DIR BUILDDIR SRCDIR CONF}
kdir=${2:?} builddir=${3:?} srcdir=${4:?} conf=${5:?}
builddir=$(cd "$builddir" && pwd) || exit 1
srcdir=$(cd "$srcdir" && pwd) || exit 1
root=$(mktemp -d "${TMPDIR:-/tmp}/rrt-softroce-root.XXXXXX") || exit 1
trap 'rm -rf "$root"' EXIT
elfs="$root.elfs"
: >"$elfs" || exit 1
trap 'rm -rf "$root" "$elfs"' EXIT

die() { echo "initramfs: $*" >&2; exit 1; }
is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }
# put SRC at DST (a path inside the guest), dereferencing links; ELF files are remembered for ldd
put() {
  mkdir -p "$root$(dirname "$2")" && cp -L "$1" "$root$2" || die "cannot copy $1"
  if is_elf "$1"; then echo "$1" >>"$elfs"; fi
}
# the same, stripped of debug information (the rrt build is -g)
put_stripped() {
  put "$1" "$2"
  if command -v strip >/dev/null 2>&1; then strip --strip-debug "$root$2" 2>/dev/null || true; fi
}

# The host's merged-/usr layout (/bin -> usr/bin ...), so paths ldd prints are valid in the guest.
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/proc" "$root/sys" "$root/dev" \
  "$root/tmp" "$root/run" "$root/etc" "$root/softroce" "$root/root" || exit 1
for d in bin sbin lib lib64; do
  if [ -L "/$d" ]; then
    t=$(readlink "/$d")
    case $t in /*) mkdir -p "$root$t" ;; *) mkdir -p "$root/$t" ;; esac
    ln -s "$t" "$root/$d"
  else
    mkdir -p "$root/$d"
  fi
done

# busybox: the static one from busybox-static where it is installed
bb=
for c in /bin/busybox /usr/bin/busybox $(command -v busybox 2>/dev/null); do
  [ -x "$c" ] && { bb=$c; break; }
done
[ -n "$bb" ] || die "busybox not found"
put "$bb" /bin/busybox
put "$(command -v bash)" /bin/bash

# rdma-core and friends: whichever of them are installed (the guest reports the others as SKIP)
for t in ibv_devices ibv_devinfo ibv_rc_pingpong ibv_srq_pingpong ibv_ud_pingpong rping \
         ucmatose ib_write_bw ib_read_bw ib_send_lat rdma; do
  p=$(PATH=$PATH:/sbin:/usr/sbin command -v "$t" 2>/dev/null) && put "$p" "/usr/bin/$t"
done
provider=$(ls /usr/lib/*/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n 1)
[ -n "$provider" ] || die "rdma-core's rxe provider (ibverbs-providers) not found"
put "$provider" "$provider"
put /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/rxe.driver

# rrt: one guest path per build output
add_program() {  # build-tree path relative to builddir, guest path
  src="$builddir/$1"
  [ -f "$src" ] && [ -x "$src" ] || return 0
  if ! is_elf "$src"; then
    # a libtool wrapper script: the real program is in .libs/ (lt- prefixed when relinked)
    d=$(dirname "$src") b=$(basename "$src")
    if is_elf "$d/.libs/$b"; then src="$d/.libs/$b"
    elif is_elf "$d/.libs/lt-$b"; then src="$d/.libs/lt-$b"
    else return 0; fi
  fi
  put_stripped "$src" "$2"
}
[ -f "$builddir/rrun" ] || die "$builddir/rrun is not built"
add_program rrun /rrt/rrun
for dir in apps apps/examples tests/mp tests/coll tests/mpi; do
  for f in "$builddir/$dir"/*; do
    case $f in *.sh|*.o|*.lo|*.la|*.in|*.c|*.cc|*.h|*/Makefile*|*/local.mk) continue ;; esac
    rel=${f#"$builddir/"}
    add_program "$rel" "/rrt/$rel"
  done
done
# coll_suite.sh's trick: run_testlist.sh looks for every program in tests/mp/
[ -f "$root/rrt/tests/coll/coll_check" ] && cp "$root/rrt/tests/coll/coll_check" "$root/rrt/tests/mp/"
for f in $(find "$builddir" -path "$builddir/tests/softrdma" -prune -o \
             -path '*/.libs/*.so*' \( -type f -o -type l \) -print); do
  put_stripped "$f" "/rrt/lib/$(basename "$f")"
done
put "$srcdir/tests/mp/run_testlist.sh" /rrt/tests/mp/run_testlist.sh
put "$srcdir/tests/softroce/testlist" /rrt/tests/softroce/testlist

# every library the ELF files need, where ldd finds it on this host (rrt's own are in /rrt/lib)
pmix=
done_n=0
while [ "$done_n" -lt "$(wc -l <"$elfs")" ]; do
  all=$(wc -l <"$elfs")
  for lib in $(sed -n "$((done_n + 1)),${all}p" "$elfs" | xargs -r ldd 2>/dev/null |
               sed -n 's/^[[:space:]]*\([^ ]* => \)\{0,1\}\(\/[^ ]*\) (0x[0-9a-f]*)$/\2/p' | sort -u); do
    case $lib in "$builddir"/*) continue ;; esac
    [ -e "$root$lib" ] && continue
    put "$lib" "$lib"
    case $lib in */libpmix.so*) pmix=$lib ;; esac
  done
  done_n=$all
  # OpenPMIx loads its components at run time from <libdir>/pmix2 (Debian's layout)
  if [ -n "$pmix" ]; then
    ptree=$(dirname "$(readlink -f "$pmix")")/pmix2
    if [ -d "$ptree" ] && [ ! -d "$root$ptree" ]; then
      for f in $(find "$ptree" -type f -o -type l); do put "$f" "$f"; done
    fi
  fi
done
[ -n "$pmix" ] || die "no program links libpmix (is the rrt build complete?)"

# kernel modules, in the order kernel.sh resolved
mkdir -p "$root/lib/modules" && cp "$kdir"/modules/*.ko "$kdir/load-order" "$root/lib/modules/" ||
  die "cannot copy the modules from $kdir"

# the little /etc a libc, PMIx and the tools want
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
printf '127.0.0.1 localhost softroce\n10.11.12.1 softroce-rxe\n' >"$root/etc/hosts"
printf 'passwd: files\ngroup: files\nhosts: files\n' >"$root/etc/nsswitch.conf"
cp "$srcdir/tests/softroce/guest_init.sh" "$root/init" && chmod 755 "$root/init" || exit 1
cp "$conf" "$root/softroce/conf" || exit 1

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp" &&
  mv "$out.tmp" "$out" || die "cpio failed"
