#!/usr/bin/env python3
"""Writes the hand-made seed inputs of tests/fuzz/corpus/<target>/seed-*.

Run from the repository root when a wire format changes; crashers found by
`make fuzz` sit beside the seeds as crash-* and are kept as they are.
Protobuf is encoded by hand here (proto3: varints and length-delimited
fields, proto/mcrepl.proto) so no protobuf package is needed.
"""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

# Master method indexes (the order of `service Master` in the proto).
(MOUNT, UNMOUNT, HEARTBEAT, PUT_START, PUT_END, PUT_REVOKE, GET, BATCH_GET,
 EXIST, REMOVE, FETCH, MARK, COPY_START, COPY_END, COPY_REVOKE, DYN_START,
 DYN_END, DYN_REVOKE, PROPOSE, STATS, WARMUP, STAT) = range(22)


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def msg(*fields):
    """fields: (number, value); int -> varint, str/bytes -> bytes,
    list -> repeated (packed for ints)."""
    out = bytearray()
    for num, val in fields:
        if isinstance(val, list):
            if val and isinstance(val[0], int):
                body = b"".join(varint(x) for x in val)
                out += varint(num << 3 | 2) + varint(len(body)) + body
            else:
                for x in val:
                    out += msg((num, x))
        elif isinstance(val, bool) or isinstance(val, int):
            out += varint(num << 3) + varint(int(val))
        else:
            b = val.encode() if isinstance(val, str) else val
            out += varint(num << 3 | 2) + varint(len(b)) + b
    return bytes(out)


def frame(method, body=b"", rid=1, status=0, error=""):
    env = msg((1, rid), (2, method), (3, status), (4, error), (5, body))
    return struct.pack(">I", len(env)) + env


def mount(client, name, domain="", cap=64 << 20, dyn=True):
    return frame(MOUNT, msg((1, client), (2, "host-" + name), (3, domain),
                            (4, name), (5, cap), (6, "127.0.0.1:1"), (7, 1),
                            (8, ["dynamic_copy"] if dyn else [])))


def tk(*extra, key="k"):
    return msg((1, "t"), (2, key), *extra)


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def frames():
    write("frame", "empty-envelope", b"\0\0\0\0")
    write("frame", "stats", frame(STATS))
    write("frame", "unknown-method", frame(99))
    write("frame", "exist", frame(EXIST, tk(), rid=7))
    write("frame", "error-reply", frame(EXIST, rid=3, status=14,
                                        error="body is not valid"))
    write("frame", "mount", mount(0xA1, "seg-a", "dc1"))
    write("frame", "heartbeat", frame(HEARTBEAT, msg((1, 0xA1), (2, [5, 6]),
                                                     (3, [1, 2]))))
    write("frame", "batch-get", frame(BATCH_GET, msg((1, "t"),
                                                     (2, ["a", "b", ""]))))
    write("frame", "pipelined", frame(EXIST, tk()) + frame(STATS, rid=2) +
          frame(GET, tk(), rid=3))
    write("frame", "truncated", frame(EXIST, tk())[:-3])
    write("frame", "too-large", b"\x7f\xff\xff\xff" + b"x" * 8)
    write("frame", "bad-envelope", b"\0\0\0\2\xff\xff")
    write("frame", "bad-body", frame(GET, b"\x12\x7f"))
    write("frame", "short-prefix", b"\0\0")


def master():
    stream = (mount(0xA1, "seg-a", "dc1") + mount(0xB2, "seg-b", "dc2") +
              frame(PUT_START, tk((3, 4096), (4, 1))) +
              frame(PUT_END, tk((3, 1))) +
              b"".join(frame(GET, msg((1, "t"), (2, "k"), (3, "dc2")),
                             rid=100) for _ in range(6)) +
              frame(FETCH, msg((1, 0xA1))) + frame(FETCH, msg((1, 0xB2))) +
              frame(DYN_START, msg((1, 0xA1), (2, 1), (3, 1), (4, 1),
                                   (5, "t"), (6, "k"), (7, 1), (8, 2))) +
              frame(DYN_END, msg((1, 0xA1), (2, 1), (3, 1), (4, 1),
                                 (5, "t"), (6, "k"))) +
              frame(MARK, msg((1, 0xA1), (2, 1))) +
              frame(STAT, tk()) +
              frame(BATCH_GET, msg((1, "t"), (2, ["k", "x"]))) +
              frame(STATS) + frame(HEARTBEAT, msg((1, 0xA1), (2, [9]),
                                                  (3, [1]))))
    copy = (frame(PUT_START, tk((3, 100), (4, 1), key="c")) +
            frame(PUT_END, tk((3, 2), key="c")) +
            frame(COPY_START, msg((1, 0xA1), (3, "t"), (4, "c"), (5, 1),
                                  (6, 2))) +
            frame(COPY_END, msg((1, 0xA1), (3, "t"), (4, "c"))) +
            frame(PUT_START, tk((3, 100), (4, 1), key="r")) +
            frame(PUT_REVOKE, tk((3, 3), key="r")) +
            frame(PROPOSE, msg((1, "p1"), (2, "t"), (3, "c"), (4, "dc2"),
                               (5, "dc2"), (6, 2), (7, 100))) +
            frame(WARMUP, msg((1, "dc3"))) + mount(0xC3, "seg-c", "dc3") +
            frame(EXIST, tk(key="c")) + frame(REMOVE, tk(key="c")) +
            frame(COPY_REVOKE, msg((1, 0xA1), (3, "t"), (4, "c"))) +
            frame(DYN_REVOKE, msg((1, 0xA1), (3, 1), (5, "t"), (6, "k"))) +
            frame(UNMOUNT, msg((1, 0xB2), (2, 2))) +
            frame(GET, tk(), rid=60000))
    # first byte: mode (bits % 3), domain-aware 4, proposals 8, reader
    # order 16, read-load placement 32, scaled threshold 64, no cooldown 128
    for name, opt in (("off", 0x00), ("observe", 0x01), ("enforce", 0x02),
                      ("enforce-domains", 0x0e), ("all", 0xfe)):
        write("master", name, bytes([opt]) + stream + copy)
    write("master", "bad-input", bytes([0x0e]) +
          mount(0, "", cap=0) + mount(0xA1, "tiny", cap=1) +
          frame(PUT_START, tk((3, 0))) +
          frame(PUT_START, msg((1, "t" * 300), (2, "k"), (3, 1))) +
          frame(GET, msg((2, ""))) + frame(BATCH_GET, msg((1, "t"))) +
          frame(FETCH, msg((1, 0x99), (2, 100000))) +
          frame(WARMUP, msg((1, "bad domain!"))) + frame(77) +
          frame(GET, b"\xff"))


def data_proto():
    def req(op, seg, off, length, token=0, magic=0x4D434450, ver=1):
        return struct.pack(">IBBHQQQQ", magic, ver, op, 0, seg, off, length,
                           token)

    def tail(seg_len, max_len, status=0, length=0, magic=0x4D434452):
        return (struct.pack(">QQ", seg_len, max_len) +
                struct.pack(">IHHQ", magic, status, 0, length) +
                struct.pack(">QQQQ", 1, 4096, 2, 8192))

    write("data_proto", "read", req(1, 1, 0, 4096) + tail(1 << 20, 0))
    write("data_proto", "write-end", req(2, 1, 4096, 4096, 0xfeed) +
          tail(8192, 4096))
    write("data_proto", "stats", req(3, 1, 0, 0) + tail(0, 0))
    write("data_proto", "overflow", req(1, 1, 2**64 - 1, 2) +
          tail(2**64 - 1, 0, status=3, length=27))
    write("data_proto", "too-large", req(1, 1, 0, 1 << 30) +
          tail(1 << 40, 1 << 20, status=5))
    write("data_proto", "bad-magic", req(1, 1, 0, 1, magic=0x47455420) +
          tail(1, 0, magic=0))
    write("data_proto", "bad-version", req(1, 1, 0, 1, ver=2) + tail(1, 0))
    write("data_proto", "bad-op", req(9, 1, 0, 1) + tail(1, 0, status=99))
    write("data_proto", "short", req(1, 1, 0, 1)[:20])


def jsonl():
    write("jsonl", "tiny-trace", open(os.path.join(
        ROOT, "..", "..", "sim", "tiny_trace.jsonl"), "rb").read())
    write("jsonl", "line", b'{"timestamp": 1.5e3, "hash_ids": [1, 2, 3]}\n')
    write("jsonl", "members",
          b'{"a": {"b": [true, false, null, -0.5e-3, "\\u00e9\\n"]}, '
          b'"timestamp": 0, "hash_ids": [18446744073709551615, 0]}\n')
    write("jsonl", "unsorted",
          b'{"timestamp": 5, "hash_ids": [7]}\n\n'
          b'{"timestamp": 1, "hash_ids": [7, 7, 8]}\n'
          b'{"timestamp": 1, "hash_ids": []}')
    write("jsonl", "malformed",
          b'{"timestamp": 01, "hash_ids": [1]}\n'
          b'{"timestamp": 1, "hash_ids": [1.0]}\n'
          b'{"timestamp": -1, "hash_ids": [1]}\n'
          b'{"timestamp": 1, "timestamp": 2, "hash_ids": []}\n'
          b'{"timestamp": 1, "hash_ids": [18446744073709551616]}\n'
          b'{"timestamp": 1e999, "hash_ids": [1]}\n'
          b'{"timestamp": 1, "hash_ids": [1]} x\n'
          b'{"timestamp": 1, "hash_ids": "\x01"}\n'
          b'{"timestamp": 1, "hash_ids": [1]\0}\n'
          b'[1, 2]\n{"timestamp": 1\n')
    write("jsonl", "deep", b'{"x": ' + b'[' * 70 + b']' * 70 + b'}\n')


def config():
    lines = {
        "defaults": "dynamic_replication_mode=off\nheat_window_seconds=10\n",
        "enforce": "mode = enforce\n domain_aware=true\n"
                   "cross_domain_qps_threshold=0.2\nlease_ttl_seconds=0.5\n"
                   "read_load_aware_placement=yes\n"
                   "scale_threshold_by_replicas=on\n",
        "ranges": "max_memory_replicas=1024\nheat_max_entries=4294967295\n"
                  "admission_queue_limit=1\ntarget_high_watermark=1\n"
                  "proposal_retention_limit=100000000\n"
                  "action_cooldown_seconds=86400\n"
                  "recreate_cooldown_seconds=0\n",
        "invalid": "heat_window_seconds=86400\n"
                   "admission_qps_threshold=1e9\n",
        "bad": "mode=fast\nno_such_knob=1\nheat_window_seconds=0\n"
               "heat_window_seconds=-1\nmax_memory_replicas=0x10\n"
               "target_high_watermark=nan\n=\nmode\n"
               "admission_qps_threshold=1e400\nlease_ttl_seconds=0.0004\n",
    }
    for name, text in lines.items():
        write("config", name, text.encode())


def put_size():
    """fuzz_put_size: a byte of segments (bits 0-2 the first's entry of
    its table, 3-5 the second's, 6 and 7 how many more), then records of
    a big-endian size and a byte: key (bits 0-1), replica_num (2-3),
    PutEnd and GetReplicaList (16), Remove (32)."""
    def rec(size, what=16):
        return struct.pack(">QB", size, what)
    top = (1 << 64) - 1
    largest = top - 127  # STORE_MAX_OBJECT_BYTES
    seeds = {
        "max": bytes([2]) + rec(top) + rec(1000),
        "max-less-stamp": bytes([2]) + rec(top - 63) + rec(top - 64, 17),
        "largest-plus-one": bytes([5]) + rec(largest + 1),
        "largest-fits": bytes([5]) + rec(largest) + rec(1, 33),
        "two-to-63": bytes([4]) + rec(1 << 63) + rec((1 << 63) - 64, 1 | 16),
        "zero": bytes([2]) + rec(0) + rec(64, 16 | 32),
        "segment-edge": bytes([2]) + rec((1 << 20) - 64) +
                        rec((1 << 20) - 63, 1 | 16),
        "three-segments": bytes([0x80 | 0x40 | 3 << 3 | 2]) +
                          rec(4096, 12 | 16) + rec(top, 1 | 12 | 16) +
                          rec(1 << 19, 2 | 8 | 16 | 32) + rec(100, 3),
        "mount-wraps": bytes([0x40 | 7 << 3 | 6]) + rec(1 << 30, 4 | 16),
    }
    for name, data in seeds.items():
        write("put_size", name, data)


if __name__ == "__main__":
    frames()
    master()
    data_proto()
    jsonl()
    config()
    put_size()
