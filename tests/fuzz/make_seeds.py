#!/usr/bin/env python3
# Writes the seed inputs of tests/fuzz/corpus/ (run by hand when the formats change; the
# output is committed). Each seed is a well-formed example of what its target parses, so the
# fuzzer starts from inputs that reach deep into the parser. Inputs of crashes found are added
# to the same folders by hand (named crash-<what>), never generated here.
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(here, 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed-' + name), 'wb') as f:
        f.write(data)


# ---- fuzz_engine_am: ops (see fuzz_engine_am.cc) ------------------------------------------
EAGER, EAGER_SYNC, EAGER_FRAG, RTS, CTS, DATA, FIN, ACK = range(1, 9)
ID0 = 1 << 32  # request id of slot 0, generation 1 (the first id a fresh engine hands out)


def match(ctx=0, src=1, tag=5, seq=0):
    return struct.pack('<IiiI', ctx, src, tag, seq)


def msg(am, body, src_sel=0):
    return bytes([0, src_sel, am]) + struct.pack('<H', len(body)) + body


def recv(size, tag=5, src_sel=1, coll=0):
    return bytes([1, coll, src_sel, tag & 0xff]) + struct.pack('<I', size)[:3]


def send(size, tag=5, sync=0, coll=0):
    return bytes([2, coll, sync, tag & 0xff]) + struct.pack('<I', size)[:3]


PROGRESS = bytes([3])


def eager(total, payload, seq=0, tag=5):
    return match(seq=seq, tag=tag) + struct.pack('<Q', total) + payload


def rts(size, mode, sreq=0x77, rkey=b'', seq=0):
    return (match(seq=seq) + struct.pack('<QQQBBB5x', sreq, size, 0x10000, mode, len(rkey), 0)
            + rkey)


write('fuzz_engine_am', 'eager-expected', recv(100) + msg(EAGER, eager(100, b'x' * 100)) + PROGRESS)
write('fuzz_engine_am', 'eager-unexpected', msg(EAGER, eager(100, b'y' * 100)) + recv(100) + PROGRESS)
write('fuzz_engine_am', 'eager-truncated', recv(10) + msg(EAGER, eager(100, b'z' * 100)) + PROGRESS)
write('fuzz_engine_am', 'eager-sync',
      recv(8) + msg(EAGER_SYNC, eager(8, b'') [:24] + struct.pack('<Q', 0x99) + b'8bytes!!') + PROGRESS)
write('fuzz_engine_am', 'eager-frag',
      recv(300) + msg(EAGER, eager(300, b'a' * 100)) + msg(EAGER_FRAG, b'b' * 100)
      + msg(EAGER_FRAG, b'c' * 100) + PROGRESS)
write('fuzz_engine_am', 'eager-frag-unexpected',
      msg(EAGER, eager(300, b'a' * 100)) + msg(EAGER_FRAG, b'b' * 100) + recv(300)
      + msg(EAGER_FRAG, b'c' * 100) + PROGRESS)
write('fuzz_engine_am', 'rts-get', recv(5000) + msg(RTS, rts(5000, 0)) + PROGRESS)
write('fuzz_engine_am', 'rts-get-unexpected', msg(RTS, rts(70000, 0, rkey=b'K' * 16)) + recv(70000) + PROGRESS)
write('fuzz_engine_am', 'rts-copy-data',
      recv(3000) + msg(RTS, rts(3000, 2)) + PROGRESS
      + msg(DATA, struct.pack('<QQ', ID0, 0) + b'd' * 1500)
      + msg(DATA, struct.pack('<QQ', ID0, 1500) + b'e' * 1500) + PROGRESS)
write('fuzz_engine_am', 'rts-put-fin',
      recv(3000) + msg(RTS, rts(3000, 1)) + PROGRESS + msg(FIN, struct.pack('<Q', ID0)) + PROGRESS)
write('fuzz_engine_am', 'send-rndv-fin', send(4096) + PROGRESS + msg(FIN, struct.pack('<Q', ID0)) + PROGRESS)
write('fuzz_engine_am', 'send-rndv-cts-put',
      send(4096) + PROGRESS
      + msg(CTS, struct.pack('<QQQQBB6x', ID0, 0x1234, 0x20000, 4096, 1, 0)) + PROGRESS)
write('fuzz_engine_am', 'send-rndv-cts-copy',
      send(20000) + PROGRESS
      + msg(CTS, struct.pack('<QQQQBB6x', ID0, 0x1234, 0, 20000, 2, 0)) + PROGRESS)
write('fuzz_engine_am', 'send-sync-ack',
      send(16, sync=1) + PROGRESS + msg(ACK, struct.pack('<Q', ID0)) + PROGRESS)
write('fuzz_engine_am', 'probe-cancel',
      msg(EAGER, eager(4, b'abcd', tag=3)) + bytes([4, 0, 1, 3]) + recv(4, tag=9) + bytes([5, 0]) + PROGRESS)
write('fuzz_engine_am', 'anysource-anytag', recv(64, tag=0xff, src_sel=2) + msg(EAGER, eager(64, b'q' * 64)) + PROGRESS)

# ---- fuzz_shm_ring: tail (2 bytes) + cells of a 4 KiB ring -----------------------------------
def record(am, payload):
    word = (1 << 40) | (am << 32) | len(payload)
    raw = struct.pack('<Q', word) + payload
    return raw + b'\0' * (-len(raw) % 64)


def skip_to_end(used_cells):
    return struct.pack('<Q', 2 << 40) + b'\0' * ((64 - used_cells) * 64 - 8)


write('fuzz_shm_ring', 'two-records', struct.pack('<H', 0) + record(1, b'hello') + record(3, b'x' * 200))
write('fuzz_shm_ring', 'skip-wrap', struct.pack('<H', 62) + b'\0' * (62 * 64)
      + struct.pack('<Q', 2 << 40) + b'\0' * 120)
write('fuzz_shm_ring', 'full', struct.pack('<H', 0) + b''.join(record(1, b'r' * 56) for _ in range(64)))
write('fuzz_shm_ring', 'empty', struct.pack('<H', 5))

# ---- fuzz_shm_connect: the 24-byte address blob ---------------------------------------------
def blob(magic=0x72736861, version=1, local_index=1, rank=1, pid=4242, local_size=2,
         ring=256 << 10):
    return struct.pack('<IHHiiII', magic, version, local_index, rank, pid, local_size, ring)


write('fuzz_shm_connect', 'valid', blob())
write('fuzz_shm_connect', 'wrong-rank', blob(rank=0))
write('fuzz_shm_connect', 'short', blob()[:20])

# ---- fuzz_config: tunable index byte + value ------------------------------------------------
for i, v in enumerate([b'64K', b'1Gi', b'auto', b'on', b'0.5', b'18446744073709551615',
                       b'16EiB', b'shm,tcp', b'-1', b'nan']):
    write('fuzz_config', 'value%d' % i, bytes([i]) + v)

# ---- fuzz_rrun_options: argv joined by NUL --------------------------------------------------
for name, argv in [('basic', ['-n', '4', 'prog', 'arg']),
                   ('all', ['-np=2', '--tag-output', '--timeout', '1.5', '-x', 'A=1', '--env=B=2',
                            '--bind-to', 'core', '--oversubscribe', '--', 'prog']),
                   ('short-forms', ['-n3', '-xHOME', 'prog']),
                   ('missing', ['--timeout']),
                   ('help', ['--help'])]:
    write('fuzz_rrun_options', name, b'\0'.join(a.encode() for a in argv))

# ---- fuzz_tcp_stream: side, Hello mode, then frame ops (see fuzz_tcp_stream.cc) --------------
def tcp_am(am_id, payload):
    return bytes([0, am_id]) + struct.pack('<H', len(payload)) + payload


def tcp_put(off, payload, cookie=None):
    flags = 0 if cookie is None else 1
    extra = b'' if cookie is None else struct.pack('<II', cookie >> 32, cookie & 0xffffffff)
    return bytes([1, flags]) + extra + struct.pack('<HH', off, len(payload)) + payload


def tcp_raw(data):
    return bytes([2, len(data)]) + data


def tcp_header(length, kind, am_id=0):
    return bytes([3]) + struct.pack('<IBB', length, kind, am_id)


VALID_HELLO = bytes([0])  # a valid Hello, no edits
for side, name in [(0, 'accept'), (1, 'connect')]:
    write('fuzz_tcp_stream', name + '-ams', bytes([side]) + VALID_HELLO + tcp_am(1, b'eager')
          + tcp_am(4, b'r' * 3000) + tcp_am(2, b''))
    write('fuzz_tcp_stream', name + '-put-then-fin', bytes([side]) + VALID_HELLO
          + tcp_put(128, b'p' * 4096) + tcp_am(7, struct.pack('<Q', 1)))
write('fuzz_tcp_stream', 'accept-wrong-secret', bytes([0, 2, 9, 0x3d, 20, 0]) + tcp_am(1, b'x'))
write('fuzz_tcp_stream', 'accept-wrong-rank', bytes([0, 1, 40, 0]) + tcp_am(1, b'x'))
write('fuzz_tcp_stream', 'connect-rejected', bytes([1, 1, 52, 2]) + tcp_am(1, b'x'))
write('fuzz_tcp_stream', 'accept-garbage-hello', bytes([0, 0x80]) + b'GET / HTTP/1.0\r\n\r\n' * 4)
write('fuzz_tcp_stream', 'accept-short-hello', bytes([0, 0x80]) + b'rrt-tcp1')
write('fuzz_tcp_stream', 'put-bad-cookie', bytes([0]) + VALID_HELLO
      + tcp_put(0, b'z' * 64, cookie=0x1234567890abcdef))
write('fuzz_tcp_stream', 'put-past-region', bytes([0]) + VALID_HELLO + tcp_put(65000, b'o' * 1000))
write('fuzz_tcp_stream', 'am-too-long', bytes([0]) + VALID_HELLO + tcp_header(1 << 20, 1))
write('fuzz_tcp_stream', 'unknown-kind', bytes([1]) + VALID_HELLO + tcp_header(8, 9))
write('fuzz_tcp_stream', 'partial-frame', bytes([0]) + VALID_HELLO + tcp_raw(struct.pack('<IBBH', 100, 1, 3, 0) + b'cut'))
# Two streams asked for (Hello byte 60, `streams`): the connecting transport opens a stripe
# stream to the harness, which leaves it unanswered (side bit 1 clear), answers it (bit 1) or
# answers naming a wrong stream (bit 2); the accepting transport waits for a stripe stream that
# never comes, and a stripe mark of zero bytes passes.
TWO_STREAMS = bytes([1, 60, 2])
write('fuzz_tcp_stream', 'connect-stripe-unanswered', bytes([1]) + TWO_STREAMS
      + tcp_am(1, b'eager') + tcp_am(2, b''))
write('fuzz_tcp_stream', 'connect-stripe-answered', bytes([3]) + TWO_STREAMS
      + tcp_put(128, b'p' * 4096) + tcp_am(7, struct.pack('<Q', 1)))
write('fuzz_tcp_stream', 'connect-stripe-wrong-stream', bytes([7]) + TWO_STREAMS + tcp_am(1, b'x'))
# Bit 3: the PUT frames travel on the stripe stream; a stripe mark on stream 0 (a raw frame)
# announces their payload bytes, so the AM after it waits for them.
write('fuzz_tcp_stream', 'connect-stripe-puts', bytes([11]) + TWO_STREAMS
      + tcp_put(128, b's' * 5000) + tcp_am(3, b'before the mark') + tcp_header(32, 3)
      + tcp_raw(struct.pack('<7II', 5000, 0, 0, 0, 0, 0, 0, 0)) + tcp_am(7, b'after the mark'))
write('fuzz_tcp_stream', 'accept-two-streams-empty-mark', bytes([0]) + TWO_STREAMS
      + tcp_header(32, 3) + tcp_raw(bytes(32)) + tcp_am(1, b'after the mark'))

# ---- fuzz_tcp_address: header (magic, version, count, rank, port) + entries (family, prefix,
# 16 address bytes: IPv4 in the first 4) --------------------------------------------------------
def v4(ip, prefix):
    return (4, prefix, struct.pack('<I', ip) + bytes(12))


def v6(addr, prefix):
    return (6, prefix, addr)


def tcp_addr(entries, rank=1, port=0x3930, magic=0x72746370, version=2, count=None):
    head = struct.pack('<IHHiHH', magic, version, len(entries) if count is None else count,
                       rank, port, 0)
    return head + b''.join(struct.pack('<BB2x16s', fam, prefix, addr) for fam, prefix, addr in entries)


ULA = bytes([0xfd, 0, 0, 0, 0, 0, 0, 1] + [0] * 7 + [2])
write('fuzz_tcp_address', 'one', tcp_addr([v4(0x0100007f, 8)]))
write('fuzz_tcp_address', 'three', tcp_addr([v4(0x0302010a, 16), v4(0x09_07_a8c0, 24), v4(0x0100007f, 8)]))
write('fuzz_tcp_address', 'count-too-big', tcp_addr([v4(0x0100007f, 8)], count=2))
write('fuzz_tcp_address', 'bad-prefix', tcp_addr([v4(0x0100007f, 33)]))
write('fuzz_tcp_address', 'wrong-rank', tcp_addr([v4(0x0100007f, 8)], rank=0))
write('fuzz_tcp_address', 'no-port', tcp_addr([v4(0x0100007f, 8)], port=0))
write('fuzz_tcp_address', 'ipv6-and-ipv4', tcp_addr([v6(ULA, 64), v4(0x0100007f, 8)]))
write('fuzz_tcp_address', 'ipv6-bad-prefix', tcp_addr([v6(ULA, 129)]))
write('fuzz_tcp_address', 'ipv4-junk-after-address', tcp_addr([(4, 8, struct.pack('<I', 0x0100007f) + bytes(11) + b'x')]))
write('fuzz_tcp_address', 'unknown-family', tcp_addr([(5, 8, bytes(16))]))
write('fuzz_tcp_address', 'v1-refused', tcp_addr([v4(0x0100007f, 8)], version=1))


# ---- fuzz_verbs_address: the version-1 blob of a job of two ----------------------------------
def verbs_addr(slots, magic=0x72727662, version=1, lid=0, gid=bytes(16), mtu=5, has_gid=1,
               link=2, count=None):
    head = struct.pack('<IHH16sBBBBI', magic, version, lid, gid, mtu, has_gid, link, 0,
                       len(slots) if count is None else count)
    return head + b''.join(struct.pack('<II', qpn, psn) for qpn, psn in slots)


ROCE_GID = bytes(10) + b'\xff\xff' + bytes([127, 0, 0, 1])
write('fuzz_verbs_address', 'v1-roce', verbs_addr([(0x11, 0x123456), (0, 0)], gid=ROCE_GID))
write('fuzz_verbs_address', 'v1-ib-lid', verbs_addr([(0x12, 7), (0x13, 8)], lid=3, has_gid=0,
                                                     link=1, mtu=3))
write('fuzz_verbs_address', 'v1-no-qp-for-us', verbs_addr([(0, 0), (0x14, 1)]))
write('fuzz_verbs_address', 'v1-bad-mtu', verbs_addr([(0x11, 1), (0, 0)], mtu=6))
write('fuzz_verbs_address', 'v1-wrong-count', verbs_addr([(0x11, 1), (0, 0)], count=3))
write('fuzz_verbs_address', 'v1-truncated', verbs_addr([(0x11, 1), (0, 0)])[:40])
write('fuzz_verbs_address', 'v2-unknown', verbs_addr([(0x11, 1), (0, 0)], version=2))


# Version 3: the class table (count, 3 pad bytes, 4 x (buffer bytes, credits, pad)) after the
# header; count = ranks x classes slots, rank-major. The fuzzed transport runs with auto
# classes: 1024 and 8256 bytes.
def verbs_addr3(slots, classes=((1024, 64), (8256, 16)), n=None, version=3, **kw):
    table = struct.pack('<B3x', len(classes) if n is None else n)
    for i in range(4):
        b, c = classes[i] if i < len(classes) else (0, 0)
        table += struct.pack('<IHH', b, c, 0)
    v = verbs_addr(slots, version=version, **kw)
    return v[:32] + table + v[32:]


write('fuzz_verbs_address', 'v3-roce', verbs_addr3([(0x11, 5), (0x12, 6), (0, 0), (0, 0)],
                                                   gid=ROCE_GID))
write('fuzz_verbs_address', 'v3-no-qp-class-1', verbs_addr3([(0x11, 5), (0, 0), (0, 0), (0, 0)]))
write('fuzz_verbs_address', 'v3-one-class', verbs_addr3([(0x11, 5), (0, 0)], classes=((8256, 16),)))
write('fuzz_verbs_address', 'v3-descending', verbs_addr3([(0x11, 5), (0x12, 6), (0, 0), (0, 0)],
                                                         classes=((8256, 16), (1024, 64))))
write('fuzz_verbs_address', 'v3-small-largest', verbs_addr3([(0x11, 5), (0x12, 6), (0, 0), (0, 0)],
                                                            classes=((256, 64), (4096, 16))))


# ---- fuzz_rma_target: requests to a window (see fuzz_rma_target.cc) ------------------------
PUT, GET, ACC, GETACC, CAS, LOCK, UNLOCK, POST, COMPLETE = range(1, 10)


def rma_header(op, bytes_=8, disp=0, inlined=1, type_=0, rop=0, id_=1, lock=0):
    return struct.pack('<BBBBiiIQQ', op, lock, inlined, 0, type_, rop, id_, bytes_, disp)


def rma_req(win, body, flags=3):
    return bytes([0, win, flags]) + struct.pack('<H', len(body)) + body


def rma_data(win, id_, length):
    return bytes([1, win]) + struct.pack('<IH', id_, length)


RMA_PROGRESS = bytes([2])
INT64, SUM, REPLACE, NO_OP = 5, 0, 12, 13
write('fuzz_rma_target', 'put-inline', rma_req(0, rma_header(PUT, 8, 16) + bytes(range(8))))
write('fuzz_rma_target', 'put-data', rma_req(0, rma_header(PUT, 200, 8, inlined=0, id_=7))
      + rma_data(0, 7, 200) + RMA_PROGRESS)
write('fuzz_rma_target', 'put-no-data', rma_req(1, rma_header(PUT, 64, 2, inlined=0, id_=9)))
write('fuzz_rma_target', 'get', rma_req(1, rma_header(GET, 16, 3, inlined=0)) + RMA_PROGRESS)
write('fuzz_rma_target', 'acc-sum', rma_req(1, rma_header(ACC, 16, 1, type_=INT64, rop=SUM)
                                              + struct.pack('<qq', 5, -3)))
write('fuzz_rma_target', 'acc-data', rma_req(0, rma_header(ACC, 40, 8, inlined=0, type_=INT64,
                                                           rop=SUM, id_=11))
      + rma_data(0, 11, 40) + RMA_PROGRESS)
write('fuzz_rma_target', 'getacc-noop', rma_req(0, rma_header(GETACC, 8, 0, type_=INT64,
                                                              rop=NO_OP)))
write('fuzz_rma_target', 'cas', rma_req(1, rma_header(CAS, 8, 2, type_=INT64)
                                        + struct.pack('<qq', 0, 42)))
write('fuzz_rma_target', 'acc-queue', rma_req(0, rma_header(ACC, 24, 0, inlined=0, type_=INT64,
                                                            rop=REPLACE, id_=3))
      + rma_req(0, rma_header(ACC, 8, 0, type_=INT64, rop=SUM) + bytes(8))
      + rma_data(0, 3, 24) + RMA_PROGRESS)
write('fuzz_rma_target', 'dynamic-put', rma_req(2, rma_header(PUT, 16, 64 + 8)
                                                 + bytes(16), flags=1))
write('fuzz_rma_target', 'lock-unlock', rma_req(0, rma_header(LOCK, 0, lock=1, inlined=0))
      + rma_req(0, rma_header(LOCK, 0, lock=2, inlined=0, id_=2)) + RMA_PROGRESS
      + rma_req(0, rma_header(UNLOCK, 0, inlined=0, id_=3)) + RMA_PROGRESS)
write('fuzz_rma_target', 'pscw', rma_req(1, rma_header(POST, 0, inlined=0))
      + rma_req(1, rma_header(COMPLETE, 0, inlined=0)))
write('fuzz_rma_target', 'short', rma_req(0, b'\x01\x00\x01'))
