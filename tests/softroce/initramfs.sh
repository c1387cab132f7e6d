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
#   rdma-core: ibv_* tools, rping, ucmatose, perftest, iproute2's rdma, the rxe provider and its
#              .driver file
#   OpenPMIx's component tree (plugins, help texts), read at run time by libpmix
#   /rrt: the built rrt, laid out like the build tree (rrun, apps/, tests/mp/ with every test
#         program, coll_check included, tests/mpi/, tests/softroce/verbs_probe), libtool wrappers replaced by the real ELF
#         files, debug info stripped; librrt*.so in /rrt/lib
#   every shared library any of those ELF files needs, at the path ldd resolves on this host.
# Nothing of tests/softrdma (our stand-in libibverbs.so.1) goes in: the guest uses the real one.
# Paths with white space are not supported. Few processes per file: on a loaded 2-core machine
# every fork counts, so files are listed first and copied by directory at the end.
set -u
out=${1:?usage: initramfs.sh OUT KERNEL_DIR BUILDDIR SRCDIR CONF}
kdir=${2:?} builddir=${3:?} srcdir=${4:?} conf=${5:?}
die() { echo "initramfs: $*" >&2; exit 1; }
builddir=$(cd "$builddir" && pwd) || exit 1
srcdir=$(cd "$srcdir" && pwd) || exit 1
case "$builddir$srcdir" in *[[:space:]]*) die "paths with white space are not supported" ;; esac
root=$(mktemp -d "${TMPDIR:-/tmp}/rrt-softroce-root.XXXXXX") || exit 1
list=$root.list elfs=$root.elfs
trap 'rm -rf "$root" "$list" "$elfs"' EXIT
: >"$list" && : >"$elfs" || exit 1

# put SRC DST: SRC (links dereferenced) goes to DST inside the guest; put_elf also queues SRC for ldd
put() { echo "$1 $2" >>"$list"; }
put_elf() { echo "$1 $2" >>"$list"; echo "$1" >>"$elfs"; }
# true when FILE starts with "#!" (a script, e.g. a libtool wrapper), without a process
is_script() { IFS= read -r first <"$1" 2>/dev/null; case ${first:-} in '#!'*) return 0 ;; esac; return 1; }
rrt_files=

# busybox: the static one from busybox-static where it is installed
bb=
for c in /bin/busybox /usr/bin/busybox $(command -v busybox 2>/dev/null); do
  [ -x "$c" ] && { bb=$c; break; }
done
[ -n "$bb" ] || die "busybox not found"
put_elf "$bb" /bin/busybox
put_elf "$(command -v bash)" /bin/bash

# rdma-core and friends: whichever of them are installed (the guest reports the others as SKIP)
for t in ibv_devices ibv_devinfo ibv_rc_pingpong ibv_srq_pingpong ibv_ud_pingpong rping \
         ucmatose ib_write_bw ib_read_bw ib_send_lat rdma; do
  p=$(PATH=$PATH:/sbin:/usr/sbin command -v "$t" 2>/dev/null) && put_elf "$p" "/usr/bin/$t"
done
provider=$(ls /usr/lib/*/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n 1)
[ -n "$provider" ] || die "rdma-core's rxe provider (ibverbs-providers) not found"
put_elf "$provider" "$provider"
put /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/rxe.driver

# rrt: one guest path per build output
add_program() {  # build-tree path relative to builddir, guest path
  src="$builddir/$1"
  [ -f "$src" ] && [ -x "$src" ] || return 0
  # a libtool wrapper script: the real program is in .libs/ (lt- prefixed when relinked)
  d=${src%/*} b=${src##*/}
  if [ -f "$d/.libs/$b" ]; then src="$d/.libs/$b"
  elif [ -f "$d/.libs/lt-$b" ]; then src="$d/.libs/lt-$b"
  elif is_script "$src"; then return 0; fi
  put_elf "$src" "$2"
  rrt_files="$rrt_files $2"
}
[ -f "$builddir/rrun" ] || die "$builddir/rrun is not built"
add_program rrun /rrt/rrun
for dir in apps apps/examples tests/mp tests/coll tests/mpi tests/softroce; do
  for f in "$builddir/$dir"/*; do
    case $f in *.sh|*.o|*.lo|*.la|*.in|*.c|*.cc|*.h|*.log|*.trs|*/Makefile*|*/local.mk) continue ;; esac
    add_program "${f#"$builddir/"}" "/rrt/${f#"$builddir/"}"
  done
done
# coll_suite.sh's trick: run_testlist.sh looks for every program in tests/mp/
[ -f "$builddir/tests/coll/coll_check" ] && add_program tests/coll/coll_check /rrt/tests/mp/coll_check
for f in $(find "$builddir" -path "$builddir/tests/softrdma" -prune -o \
             -path '*/.libs/*.so*' \( -type f -o -type l \) -print); do
  put_elf "$f" "/rrt/lib/${f##*/}"
  rrt_files="$rrt_files /rrt/lib/${f##*/}"
done
put "$srcdir/tests/mp/run_testlist.sh" /rrt/tests/mp/run_testlist.sh
put "$srcdir/tests/softroce/testlist" /rrt/tests/softroce/testlist
put "$srcdir/tests/softroce/testlist.rdmacm" /rrt/tests/softroce/testlist.rdmacm
put "$srcdir/tests/softroce/rdmacm_auth.sh" /rrt/tests/softroce/rdmacm_auth.sh

# every library the ELF files need, where ldd finds it on this host (rrt's own are in /rrt/lib);
# repeated until nothing new turns up (OpenPMIx's plugins bring their own)
pmix= done_n=0
while [ "$done_n" -lt "$(wc -l <"$elfs")" ]; do
  all=$(wc -l <"$elfs")
  for lib in $(sed -n "$((done_n + 1)),${all}p" "$elfs" | xargs -r ldd 2>/dev/null |
               sed -n 's/^[[:space:]]*\([^ ]* => \)\{0,1\}\(\/[^ ]*\) (0x[0-9a-f]*)$/\2/p' | sort -u); do
    case $lib in "$builddir"/*) continue ;; esac
    grep -q "^$lib " "$list" && continue
    put_elf "$lib" "$lib"
    case $lib in */libpmix.so*) pmix=$lib ;; esac
  done
  done_n=$all
  # OpenPMIx loads its components at run time from <libdir>/pmix2 (Debian's layout)
  if [ -n "$pmix" ]; then
    ptree=$(dirname "$(readlink -f "$pmix")")/pmix2
    if [ -d "$ptree" ] && ! grep -q "^$ptree/" "$list"; then
      for f in $(find "$ptree" -type f -o -type l); do
        case $f in *.so) put_elf "$f" "$f" ;; *) put "$f" "$f" ;; esac
      done
    fi
  fi
done
[ -n "$pmix" ] || die "no program links libpmix (is the rrt build complete?)"

# The host's merged-/usr layout (/bin -> usr/bin ...), so paths ldd prints are valid in the guest.
for d in bin sbin lib lib64; do
  if [ -L "/$d" ]; then
    t=$(readlink "/$d")
    case $t in /*) mkdir -p "$root$t" ;; *) mkdir -p "$root/$t" ;; esac
    ln -s "$t" "$root/$d"
  else
    mkdir -p "$root/$d"
  fi
done
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/proc" "$root/sys" "$root/dev" \
  "$root/tmp" "$root/run" "$root/etc" "$root/softroce" "$root/root" "$root/lib/modules" || exit 1
# the copies: one mkdir, then one cp per target directory (sources keep their base names, except
# the few that do not: copied one by one)
sort -u "$list" | awk -v root="$root" '
  { n = split($2, p, "/"); dir = substr($2, 1, length($2) - length(p[n]) - 1)
    m = split($1, q, "/")
    if (q[m] == p[n]) { files[dir] = files[dir] " " $1 } else { single[$1] = root $2 }
    dirs[dir] = 1 }
  END {
    printf "mkdir -p"; for (d in dirs) printf " %s%s", root, d; print ""
    for (d in files) printf "cp -L%s %s%s/ || exit 1\n", files[d], root, d
    for (s in single) printf "cp -L %s %s || exit 1\n", s, single[s] }' | sh ||
  die "copying the files failed"
# the rrt build is -g: its debug information would triple the archive
if command -v strip >/dev/null 2>&1; then
  (cd "$root" && strip --strip-debug $(echo "$rrt_files" | sed 's| /| |g') 2>/dev/null) || true
fi

# kernel modules, in the order kernel.sh resolved
cp "$kdir"/modules/*.ko "$kdir/load-order" "$root/lib/modules/" ||
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
