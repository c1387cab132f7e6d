#!/bin/sh
# Debian's ibverbs-utils over the software RDMA device: ibv_devices and ibv_devinfo must describe
# softrdma0, and ibv_srq_pingpong / ibv_uc_pingpong must run between two processes.
command -v ibv_devinfo >/dev/null 2>&1 || { echo "ibverbs-utils not installed"; exit 77; }
. "$top_srcdir/tests/softrdma/env.sh" "$top_builddir" || exit 99
set -e

devices=$(ibv_devices)
echo "$devices"
echo "$devices" | grep -q 'softrdma0[[:space:]]*02005efffe000001'
info=$(ibv_devinfo -v -d softrdma0)
echo "$info"
for want in 'hca_id:.softrdma0' 'PORT_ACTIVE' 'link_layer:.*Ethernet' 'active_mtu:.*4096' \
            'GID\[  0\]:.*fe80::200:5eff:fe00:1, RoCE v2' 'atomic_cap:.*ATOMIC_HCA'; do
  echo "$info" | grep -q "$want" || { echo "ibv_devinfo lacks: $want"; exit 1; }
done

. "$top_srcdir/tests/softrdma/pingpong_pair.sh"

pingpong_pair ibv_srq_pingpong -n 200
pingpong_pair ibv_srq_pingpong -n 100 -e -q 4
pingpong_pair ibv_uc_pingpong -n 200
echo "ibverbs-utils over softrdma0: ok"
