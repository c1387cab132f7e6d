# tests/softroce: the Soft-RoCE tier (README.md there), never installed. One automake test boots
# Debian's stock kernel under QEMU (TCG, no network interface) with rdma_rxe on a dummy netdev and
# runs rdma-core's tools and rrt's verbs suite (tests/softroce/testlist) on it; it skips when QEMU,
# busybox, cpio, kmod or the kernel package cannot be had.
TESTS += tests/softroce/softroce_test.sh
EXTRA_DIST += tests/softroce/README.md tests/softroce/softroce_test.sh tests/softroce/kernel.sh \
	tests/softroce/initramfs.sh tests/softroce/guest_init.sh tests/softroce/testlist \
	tests/softroce/testlist.rdmacm tests/softroce/verbs_probe.c tests/softroce/rdmacm_auth.sh

if HAVE_VERBS
# Behaviours where verbs implementations may differ, probed in the guest (rdma_rxe) and, for
# comparison, on the software RDMA device of tests/softrdma when it is built.
check_PROGRAMS += tests/softroce/verbs_probe
tests_softroce_verbs_probe_SOURCES = tests/softroce/verbs_probe.c
tests_softroce_verbs_probe_LDADD = -libverbs
endif HAVE_VERBS

if HAVE_RDMACM
# A stranger's rdma_cm connection request (rdmacm_auth.sh, run in the guest: the host has no rdma_cm).
check_PROGRAMS += tests/softroce/cm_stranger
tests_softroce_cm_stranger_SOURCES = tests/softroce/cm_stranger.cc
tests_softroce_cm_stranger_LDADD = -lrdmacm
endif HAVE_RDMACM
