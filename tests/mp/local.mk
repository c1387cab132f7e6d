# tests/mp: the multi-process point-to-point suite (see tests/local.mk).
# Programs are plain C against the public API, started through rrun (or directly, or under
# Open MPI's mpirun) by run_testlist.sh from declarative lists: one line = program, ranks,
# environment. Each list is one automake test. -no-install: real binaries, not libtool
# wrapper scripts, so every launcher execs the same ELF file.
MP_TESTS_PROGS = \
	tests/mp/p2p_sizes tests/mp/p2p_self tests/mp/p2p_anysource tests/mp/p2p_nonblocking \
	tests/mp/p2p_ssend tests/mp/p2p_order tests/mp/p2p_comm tests/mp/p2p_probe \
	tests/mp/p2p_cancel tests/mp/p2p_completion tests/mp/p2p_sendrecv tests/mp/p2p_datatype \
	tests/mp/p2p_errors tests/mp/p2p_singleton tests/mp/p2p_anytag_internal \
	tests/mp/p2p_tcp_guard tests/mp/tcp_stranger tests/mp/p2p_tcp_peer_exit \
	tests/mp/p2p_regcache tests/mp/p2p_rdma_fault tests/mp/rma_win tests/mp/rma_direct tests/mp/rma_shared tests/mp/comm_idup tests/mp/p2p_mprobe tests/mp/p2p_eager_classes \
	tests/mp/neighbor_exchange \
	tests/mp/p2p_wait_sleep tests/mp/p2p_cancel_send
check_PROGRAMS += $(MP_TESTS_PROGS)
MP_LIBS = librrt.la
MP_LINK_FLAGS = $(AM_LDFLAGS) -no-install
MP_COMMON_SRC = tests/mp/mp_util.h

tests_mp_p2p_eager_classes_SOURCES = tests/mp/p2p_eager_classes.c $(MP_COMMON_SRC)
tests_mp_p2p_eager_classes_LDADD = $(MP_LIBS)
tests_mp_p2p_eager_classes_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_cancel_send_SOURCES = tests/mp/p2p_cancel_send.c $(MP_COMMON_SRC)
tests_mp_p2p_cancel_send_LDADD = $(MP_LIBS)
tests_mp_p2p_cancel_send_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_wait_sleep_SOURCES = tests/mp/p2p_wait_sleep.c $(MP_COMMON_SRC)
tests_mp_p2p_wait_sleep_LDADD = $(MP_LIBS)
tests_mp_p2p_wait_sleep_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_rma_win_SOURCES = tests/mp/rma_win.c $(MP_COMMON_SRC)
tests_mp_rma_win_LDADD = $(MP_LIBS)
tests_mp_rma_win_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_mprobe_SOURCES = tests/mp/p2p_mprobe.c $(MP_COMMON_SRC)
tests_mp_p2p_mprobe_LDADD = $(MP_LIBS)
tests_mp_p2p_mprobe_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_comm_idup_SOURCES = tests/mp/comm_idup.c $(MP_COMMON_SRC)
tests_mp_comm_idup_LDADD = $(MP_LIBS)
tests_mp_comm_idup_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_neighbor_exchange_SOURCES = tests/mp/neighbor_exchange.c $(MP_COMMON_SRC)
tests_mp_neighbor_exchange_LDADD = $(MP_LIBS)
tests_mp_neighbor_exchange_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_rma_shared_SOURCES = tests/mp/rma_shared.c $(MP_COMMON_SRC)
tests_mp_rma_shared_LDADD = $(MP_LIBS)
tests_mp_rma_shared_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_rma_direct_SOURCES = tests/mp/rma_direct.c $(MP_COMMON_SRC)
tests_mp_rma_direct_LDADD = $(MP_LIBS)
tests_mp_rma_direct_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_sizes_SOURCES = tests/mp/p2p_sizes.c $(MP_COMMON_SRC)
tests_mp_p2p_sizes_LDADD = $(MP_LIBS)
tests_mp_p2p_sizes_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_self_SOURCES = tests/mp/p2p_self.c $(MP_COMMON_SRC)
tests_mp_p2p_self_LDADD = $(MP_LIBS)
tests_mp_p2p_self_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_anysource_SOURCES = tests/mp/p2p_anysource.c $(MP_COMMON_SRC)
tests_mp_p2p_anysource_LDADD = $(MP_LIBS)
tests_mp_p2p_anysource_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_nonblocking_SOURCES = tests/mp/p2p_nonblocking.c $(MP_COMMON_SRC)
tests_mp_p2p_nonblocking_LDADD = $(MP_LIBS)
tests_mp_p2p_nonblocking_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_ssend_SOURCES = tests/mp/p2p_ssend.c $(MP_COMMON_SRC)
tests_mp_p2p_ssend_LDADD = $(MP_LIBS)
tests_mp_p2p_ssend_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_order_SOURCES = tests/mp/p2p_order.c $(MP_COMMON_SRC)
tests_mp_p2p_order_LDADD = $(MP_LIBS)
tests_mp_p2p_order_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_comm_SOURCES = tests/mp/p2p_comm.c $(MP_COMMON_SRC)
tests_mp_p2p_comm_LDADD = $(MP_LIBS)
tests_mp_p2p_comm_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_probe_SOURCES = tests/mp/p2p_probe.c $(MP_COMMON_SRC)
tests_mp_p2p_probe_LDADD = $(MP_LIBS)
tests_mp_p2p_probe_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_cancel_SOURCES = tests/mp/p2p_cancel.c $(MP_COMMON_SRC)
tests_mp_p2p_cancel_LDADD = $(MP_LIBS)
tests_mp_p2p_cancel_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_completion_SOURCES = tests/mp/p2p_completion.c $(MP_COMMON_SRC)
tests_mp_p2p_completion_LDADD = $(MP_LIBS)
tests_mp_p2p_completion_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_sendrecv_SOURCES = tests/mp/p2p_sendrecv.c $(MP_COMMON_SRC)
tests_mp_p2p_sendrecv_LDADD = $(MP_LIBS)
tests_mp_p2p_sendrecv_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_datatype_SOURCES = tests/mp/p2p_datatype.c $(MP_COMMON_SRC)
tests_mp_p2p_datatype_LDADD = $(MP_LIBS)
tests_mp_p2p_datatype_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_errors_SOURCES = tests/mp/p2p_errors.c $(MP_COMMON_SRC)
tests_mp_p2p_errors_LDADD = $(MP_LIBS)
tests_mp_p2p_errors_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_singleton_SOURCES = tests/mp/p2p_singleton.c $(MP_COMMON_SRC)
tests_mp_p2p_singleton_LDADD = $(MP_LIBS)
tests_mp_p2p_singleton_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_anytag_internal_SOURCES = tests/mp/p2p_anytag_internal.c $(MP_COMMON_SRC)
tests_mp_p2p_anytag_internal_LDADD = $(MP_LIBS)
tests_mp_p2p_anytag_internal_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_regcache_SOURCES = tests/mp/p2p_regcache.c $(MP_COMMON_SRC)
tests_mp_p2p_regcache_LDADD = $(MP_LIBS)
tests_mp_p2p_regcache_LDFLAGS = $(MP_LINK_FLAGS)

tests_mp_p2p_tcp_guard_SOURCES = tests/mp/p2p_tcp_guard.c $(MP_COMMON_SRC)
tests_mp_p2p_tcp_guard_LDADD = $(MP_LIBS)
tests_mp_p2p_tcp_guard_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_tcp_stranger_SOURCES = tests/mp/tcp_stranger.c
tests_mp_p2p_rdma_fault_SOURCES = tests/mp/p2p_rdma_fault.c
tests_mp_p2p_rdma_fault_LDADD = $(MP_LIBS)
tests_mp_p2p_rdma_fault_LDFLAGS = $(MP_LINK_FLAGS)
tests_mp_p2p_tcp_peer_exit_SOURCES = tests/mp/p2p_tcp_peer_exit.c
tests_mp_p2p_tcp_peer_exit_LDADD = $(MP_LIBS)
tests_mp_p2p_tcp_peer_exit_LDFLAGS = $(MP_LINK_FLAGS)

# One automake test per list; the lists are the suite.
MP_LISTS = tests/mp/testlist tests/mp/testlist.protocols tests/mp/testlist.errors \
	tests/mp/testlist.launch tests/mp/testlist.tcp
TESTS += tests/mp/mp_basic.sh tests/mp/mp_protocols.sh tests/mp/mp_errors.sh tests/mp/mp_launch.sh \
	tests/mp/mp_tcp.sh tests/mp/tcp_auth.sh tests/mp/tcp_peer_exit.sh
EXTRA_DIST += tests/mp/run_testlist.sh tests/mp/mp_basic.sh tests/mp/mp_protocols.sh \
	tests/mp/mp_errors.sh tests/mp/mp_launch.sh tests/mp/mp_tcp.sh tests/mp/tcp_auth.sh tests/mp/tcp_peer_exit.sh $(MP_LISTS)
