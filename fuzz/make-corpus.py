#!/usr/bin/env python3
"""Writes the frame targets' seed corpora from the real captures in tests/data.

  fuzz/make-corpus.py            rewrites fuzz/corpus/{frames,ib,iwarp}/ (committed)

frames, ib: the first frame of each kind in each capture (EtherType, IP protocol, UDP
port, BTH opcode), a second of another length where there is one, and two frames no
capture holds: a PFC pause and a RoCEv2 frame with an 802.1Q tag.
iwarp: each direction of siw-rping-iwarp.pcap's TCP connection as one stream (the MPA
request or reply, then FPDUs), a short prefix of each, and FPDU streams with markers and
CRCs (MpaFramer's layout) behind a first byte that selects them (no handshake).
"""
import os
import shutil
import struct
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(TOP, "tests", "data")
CORPUS = os.path.join(TOP, "fuzz", "corpus")


def pcap_frames(path):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        out.append(data[off:off + incl])
        off += incl
    return out


def kind(f):
    """What the fabric cares about: EtherType, IP protocol, UDP port, BTH opcode."""
    et = f[12:14]
    if et == b"\x08\x00":
        ihl = (f[14] & 15) * 4
        proto, l4 = f[23], 14 + ihl
    elif et == b"\x86\xdd":
        proto, l4 = f[20], 54
    else:
        return (et.hex(),)
    if proto != 17:
        return (et.hex(), proto)
    dport = struct.unpack(">H", f[l4 + 2:l4 + 4])[0]
    return (et.hex(), proto, dport, f[l4 + 8] if dport == 4791 else None)


def select(frames):
    """The first of each kind, and one more of another length."""
    seen = {}
    for f in frames:
        lengths = seen.setdefault(kind(f), [])
        if len(lengths) < 2 and all(len(f) != len(g) for g in lengths):
            lengths.append(f)
    return [f for fs in seen.values() for f in fs]


def pfc_pause():
    # 01:80:c2:00:00:01, MAC control 0x8808, opcode 0x0101, priority 3 paused 0xffff quanta.
    body = struct.pack(">HH8H", 0x0101, 1 << 3, 0, 0, 0, 0xFFFF, 0, 0, 0, 0)
    f = bytes.fromhex("0180c2000001525400000001") + b"\x88\x08" + body
    return f + bytes(60 - len(f))


def vlan_tagged(f):
    return f[:12] + b"\x81\x00" + struct.pack(">H", 3 << 13 | 5) + f[12:]


def write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as out:
        out.write(data)


def frame_corpus(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    roce, written = None, set()
    for pcap in sorted(os.listdir(DATA)):
        if not pcap.endswith(".pcap"):
            continue
        for i, f in enumerate(select(pcap_frames(os.path.join(DATA, pcap)))):
            if f in written:
                continue  # the same neighbour discovery in every capture
            written.add(f)
            k = kind(f)
            label = "-".join("" if x is None else str(x) for x in k).strip("-")
            write(folder, f"{pcap[:-5]}-{i:02d}-{label}.bin", f)
            if roce is None and len(k) == 4 and k[0] == "0800" and k[2] == 4791:
                roce = f
    write(folder, "synthetic-pfc-pause.bin", pfc_pause())
    write(folder, "synthetic-roce-vlan.bin", vlan_tagged(roce))


def tcp_streams(frames):
    """Each direction's TCP payload in sequence order (retransmissions once)."""
    streams = {}
    for f in frames:
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
            continue
        ihl = (f[14] & 15) * 4
        total = struct.unpack(">H", f[16:18])[0]
        tcp = 14 + ihl
        data_at = tcp + (f[tcp + 12] >> 4) * 4
        payload = f[data_at:14 + total]
        if not payload:
            continue
        key = (f[26:30], f[tcp:tcp + 2], f[30:34], f[tcp + 2:tcp + 4])
        seq = struct.unpack(">I", f[tcp + 4:tcp + 8])[0]
        streams.setdefault(key, {})[seq] = payload
    return [b"".join(p for _, p in sorted(s.items())) for _, s in sorted(streams.items())]


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def fpdus(ulpdus, markers, crc):
    """MpaFramer's stream: length, ULPDU, pad, (marker,) CRC; markers every 512 octets."""
    out, pos = bytearray(), 0

    def put(byte, start):
        nonlocal pos
        if markers and pos % 512 == 0:
            out.extend(struct.pack(">HH", 0, pos - start))
            pos += 4
        out.append(byte)
        pos += 1

    for u in ulpdus:
        start, first = pos, len(out)
        for b in struct.pack(">H", len(u)) + u + bytes((4 - (2 + len(u)) % 4) % 4):
            put(b, start)
        if markers and pos % 512 == 0:
            out.extend(struct.pack(">HH", 0, pos - start))
            pos += 4
        out.extend(struct.pack("<I", crc32c(out[first:]) if crc else 0))
        pos += 4
    return bytes(out)


def iwarp_corpus(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    streams = tcp_streams(pcap_frames(os.path.join(DATA, "siw-rping-iwarp.pcap")))
    ulpdus = []
    for i, s in enumerate(streams):
        if not s.startswith(b"MPA ID Re"):
            continue
        write(folder, f"siw-stream-{i}.bin", s)
        need = 20 + struct.unpack(">H", s[18:20])[0]
        write(folder, f"siw-stream-{i}-short.bin", s[:need + 64])
        # The ULPDUs of the capture (no markers, no CRC: siw's rping negotiated neither).
        at = need
        while at + 2 <= len(s):
            n = struct.unpack(">H", s[at:at + 2])[0]
            ulpdus.append(s[at + 2:at + 2 + n])
            at += 2 + n + (4 - (2 + n) % 4) % 4 + 4
    # No handshake: the first byte selects markers (1) and CRC (2).
    big = [u for u in ulpdus if len(u) > 200][:2] + ulpdus[:6]
    write(folder, "fpdus-markers-crc.bin", b"\x03" + fpdus(big, True, True))
    write(folder, "fpdus-markers.bin", b"\x01" + fpdus(ulpdus[:4], True, False))
    write(folder, "fpdus-crc.bin", b"\x02" + fpdus(ulpdus[:4], False, True))


def main():
    if len(sys.argv) > 1:
        print(__doc__)
        return 2
    frame_corpus(os.path.join(CORPUS, "frames"))
    frame_corpus(os.path.join(CORPUS, "ib"))
    iwarp_corpus(os.path.join(CORPUS, "iwarp"))
    for t in ("frames", "ib", "iwarp"):
        print(t, len(os.listdir(os.path.join(CORPUS, t))), "files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
