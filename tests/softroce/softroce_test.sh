#!/bin/sh
# make check entry of the Soft-RoCE tier (tests/softroce/README.md): boots Debian's stock kernel
# under QEMU's software emulation (TCG, no KVM, no network interface), with rdma_rxe bound to a
# dummy netdev, and passes or fails on the per-test lines the guest reports over its second serial
# port. Skips (77, "skipped: REASON") when QEMU, busybox, cpio or kmod is missing, or when the
# kernel package can be neither downloaded nor found in the cache.
#
# Environment:
#   RRT_SOFTROCE=0               skip this test
#   RRT_SOFTROCE_CACHE=DIR       where the kernel package is kept between runs (default
#                                /var/cache/rrt-softroce when writable, else ~/.cache/rrt-softroce)
#   RRT_SOFTROCE_TIMEOUT=S       wall-clock limit of the guest (default 420); it is killed after it
#   RRT_SOFTROCE_TEST_TIMEOUT=S  limit of one test inside the guest (default 90)
#   RRT_SOFTROCE_MEM=MIB, RRT_SOFTROCE_SMP=N   guest memory (default 1024) and vCPUs (default 2)
#   RRT_SOFTROCE_RRT=0           run only rdma-core's tools, not rrt
#   RRT_SOFTROCE_TRANSPORTS=T    the transport rrt's suite runs on (default verbs; shm checks the
#                                harness itself)
#   RRT_SOFTROCE_FILTER=REGEX    run only the lines of tests/softroce/testlist that match
#   RRT_SOFTROCE_VERBOSE=1       print every test's output (the guest console), not only failures
#   RRT_SOFTROCE_KEEP=DIR        keep the initramfs and the logs in DIR
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
here=$top_srcdir/tests/softroce
skip() { echo "skipped: $*"; exit 77; }

[ "${RRT_SOFTROCE:-1}" != 0 ] || skip "RRT_SOFTROCE=0"
qemu=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 not found (Debian: qemu-system-x86)"
command -v busybox >/dev/null 2>&1 || [ -x /bin/busybox ] || skip "busybox not found (Debian: busybox-static)"
command -v cpio >/dev/null 2>&1 || skip "cpio not found"
PATH=$PATH:/sbin:/usr/sbin
command -v depmod >/dev/null 2>&1 && command -v modprobe >/dev/null 2>&1 || skip "kmod's depmod/modprobe not found (Debian: kmod)"
command -v apt-cache >/dev/null 2>&1 || skip "apt-cache not found: the kernel comes from Debian's archive"
[ -x "$top_builddir/rrun" ] || { echo "$top_builddir/rrun is not built"; exit 99; }

cache=${RRT_SOFTROCE_CACHE:-}
if [ -z "$cache" ]; then
  if mkdir -p /var/cache/rrt-softroce 2>/dev/null && [ -w /var/cache/rrt-softroce ]; then
    cache=/var/cache/rrt-softroce
  else
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/rrt-softroce
  fi
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/rrt-softroce.XXXXXX") || exit 99
cleanup() {
  [ -n "${qpid:-}" ] && kill -9 "$qpid" 2>/dev/null
  if [ -n "${RRT_SOFTROCE_KEEP:-}" ]; then mkdir -p "$RRT_SOFTROCE_KEEP" && cp -r "$work"/. "$RRT_SOFTROCE_KEEP"/; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

kdir=$("$here/kernel.sh" "$cache" 2>"$work/kernel.log")
case $? in
  0) cat "$work/kernel.log" ;;
  77) skip "$(tail -n 1 "$work/kernel.log")" ;;
  *) cat "$work/kernel.log"; echo "kernel.sh failed"; exit 1 ;;
esac
echo "kernel: $(cat "$kdir/version") from $kdir"

# Does the build have the transport the suite is to run on? (Its namespace is in librrt.)
transport=${RRT_SOFTROCE_TRANSPORTS:-verbs}
built=0 why=
lib=$(ls "$top_builddir"/.libs/librrt.so.*.*.* 2>/dev/null | head -n 1)
if [ -z "$lib" ]; then
  why="$top_builddir/.libs/librrt.so is not built"
elif grep -aq "N3rrt9transport${#transport}${transport}" "$lib"; then
  built=1
else
  why="this rrt build has no $transport transport (no rrt::transport::$transport in $(basename "$lib"))"
fi
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# The guest's settings, read by its init script (no kernel command line parsing needed).
{
  echo "SOFTROCE_RRT_TRANSPORTS=$(q "$transport")"
  echo "SOFTROCE_RRT_BUILT=$built"
  echo "SOFTROCE_RRT_WHY=$(q "$why")"
  echo "SOFTROCE_TEST_TIMEOUT=${RRT_SOFTROCE_TEST_TIMEOUT:-90}"
  echo "MP_TIMEOUT=${RRT_SOFTROCE_TEST_TIMEOUT:-90}"
  echo "SOFTROCE_RRT=${RRT_SOFTROCE_RRT:-1}"
  echo "SOFTROCE_VERBOSE=${RRT_SOFTROCE_VERBOSE:-0}"
  echo "SOFTROCE_FILTER=$(q "${RRT_SOFTROCE_FILTER:-}")"
  # A sanitizer build: the ranks in the guest get the host's sanitizer options, and the leak
  # suppressions (tests/sanitizers/lsan.supp, third-party only) as a file the guest writes.
  supp=$(printf '%s' "${LSAN_OPTIONS:-}" | tr ':' '\n' | sed -n 's/^suppressions=//p' | head -n 1)
  if [ -n "$supp" ] && [ -f "$supp" ]; then
    echo "cat >/tmp/rrt-lsan.supp <<'RRT_LSAN_SUPP'"
    grep -v '^#' "$supp"
    echo "RRT_LSAN_SUPP"
    echo "LSAN_OPTIONS=$(q "$(printf '%s' "$LSAN_OPTIONS" | tr ':' '\n' |
      sed 's|^suppressions=.*|suppressions=/tmp/rrt-lsan.supp|' | paste -sd: -)")"
  fi
  for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS; do
    eval "val=\${$v:-}"
    [ -z "$val" ] || [ "$v" = LSAN_OPTIONS ] || echo "$v=$(q "$val")"
    [ -z "$val" ] || echo "export $v"
  done
} >"$work/conf"

t0=$(date +%s)
"$here/initramfs.sh" "$work/initramfs.cpio" "$kdir" "$top_builddir" "$top_srcdir" "$work/conf" ||
  { echo "building the initramfs failed"; exit 1; }
t1=$(date +%s)
echo "initramfs: $(du -h "$work/initramfs.cpio" | cut -f1) in $((t1 - t0)) s"

# TCG only (this machine has no usable KVM); no NIC, no default devices, no monitor; ttyS0 is the
# console, ttyS1 carries the results. The kernel panics into a reboot that -no-reboot turns into an
# exit. -m and -smp bound the guest; timeout bounds its life and kill -9 ends it for sure.
limit=${RRT_SOFTROCE_TIMEOUT:-420}
timeout -k 5 "$limit" "$qemu" -accel tcg -machine pc -cpu max -smp "${RRT_SOFTROCE_SMP:-2}" \
  -m "${RRT_SOFTROCE_MEM:-1024}" -nodefaults -no-user-config -nic none -display none \
  -monitor none -no-reboot \
  -serial "file:$work/console.log" -serial "file:$work/results.log" \
  -kernel "$kdir/vmlinuz" -initrd "$work/initramfs.cpio" \
  -append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init" \
  >"$work/qemu.log" 2>&1 </dev/null &
qpid=$!
wait "$qpid"
qrc=$?
qpid=
t2=$(date +%s)
tr -d '\r' <"$work/results.log" >"$work/results" 2>/dev/null

if [ "${RRT_SOFTROCE_VERBOSE:-0}" = 1 ] || grep -q '^SOFTROCE FAIL' "$work/results" ||
   ! grep -q '^SOFTROCE DONE' "$work/results"; then
  echo "--- guest console"
  tr -d '\r' <"$work/console.log" | tail -n 300
  echo "--- qemu"
  cat "$work/qemu.log"
fi
echo "--- results"
grep '^SOFTROCE' "$work/results"
echo "---"
boot=$(sed -n 's/^SOFTROCE TIME boot //p' "$work/results")
rxe=$(sed -n 's/^SOFTROCE TIME rxe //p' "$work/results")
done_t=$(sed -n 's/^SOFTROCE TIME done //p' "$work/results")
pass=$(grep -c '^SOFTROCE PASS' "$work/results")
fail=$(grep -c '^SOFTROCE FAIL' "$work/results")
skipped=$(grep -c '^SOFTROCE SKIP' "$work/results")
echo "guest: init at ${boot:-?} s, rxe0 up at ${rxe:-?} s, done at ${done_t:-?} s (guest uptime);" \
     "qemu ran $((t2 - t1)) s wall, exit $qrc"
echo "$pass passed, $fail failed, $skipped skipped"
# rxe's answers beside the software RDMA device's (tests/softrdma), where that is built
if grep -q '^SOFTROCE INFO rxe0 PROBE' "$work/results"; then
  sed -n 's/^SOFTROCE INFO rxe0 PROBE \([^:]*\): /\1\t/p' "$work/results" | sort >"$work/probe.rxe"
  : >"$work/probe.soft"
  if [ -x "$top_builddir/tests/softroce/verbs_probe" ] &&
     (. "$top_srcdir/tests/softrdma/env.sh" "$top_builddir" 2>/dev/null &&
      timeout 60 "$top_builddir/tests/softroce/verbs_probe" -d softrdma0 -g 1 -w 5) >"$work/probe.softrdma" 2>&1; then
    sed -n 's/^PROBE \([^:]*\): /\1\t/p' "$work/probe.softrdma" | sort >"$work/probe.soft"
  fi
  echo "--- verbs behaviours: rdma_rxe in the guest | the software RDMA device (tests/softrdma)"
  join -t "$(printf '\t')" -a 1 -e '(not run)' -o 0,1.2,2.2 "$work/probe.rxe" "$work/probe.soft" |
    awk -F '\t' '{ printf "%s %-42s rxe: %s\n%-44s softrdma: %s\n", ($2 == $3 ? " " : "*"), $1, $2, "", $3 }'
  echo "(* marks a difference)"
fi
if ! grep -q '^SOFTROCE DONE' "$work/results"; then
  if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
    echo "FAIL: the guest did not finish within $limit s (RRT_SOFTROCE_TIMEOUT) and was killed"
  else
    echo "FAIL: the guest ended (qemu exit $qrc) before reporting DONE"
  fi
  exit 1
fi
[ "$fail" -eq 0 ] || exit 1
[ "$pass" -gt 0 ] || exit 1
exit 0
