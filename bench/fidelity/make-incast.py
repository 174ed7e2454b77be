#!/usr/bin/env python3
"""Writes one star incast in HPCC's terms (into OUT_DIR) and FabricEmu's (stdout).

Usage: make-incast.py INCAST16_DIR OUT_DIR FAN_IN BYTES RATE_GBPS STAGGER_US
From HPCC's incast16 experiment: the same config (DCQCN CC_MODE 1, 32 MiB buffer,
PFC), with ECN thresholds scaled to the link rate as HPCC's run.py scales them
(100 KB and 400 KB per 25 Gb/s, Pmax 0.2); sender i starts at 10 us + i x STAGGER.
"""
import re
import sys
from pathlib import Path

src, out = Path(sys.argv[1]), Path(sys.argv[2])
n, size, gbps, stagger = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
bps = gbps * 1_000_000_000
kmin, kmax = 100 * gbps // 25, 400 * gbps // 25  # KB, as run.py

sw = n + 1
links = [f"{i} {sw} {gbps}Gbps 0.001ms 0" for i in range(n + 1)]
(out / "topology.txt").write_text(f"{n + 2} 1 {n + 1}\n{sw}\n" + "\n".join(links) + "\n")
flows = [f"{i} 0 3 100 {size} {0.00001 + i * stagger * 1e-6:.9f}" for i in range(1, n + 1)]
(out / "flow.txt").write_text(f"{n}\n" + "\n".join(flows) + "\n")
(out / "trace.txt").write_text("1\n0\n")
cfg = (src / "config.txt").read_text()
cfg = re.sub(r"^KMAX_MAP .*$", f"KMAX_MAP 1 {bps} {kmax}", cfg, flags=re.M)
cfg = re.sub(r"^KMIN_MAP .*$", f"KMIN_MAP 1 {bps} {kmin}", cfg, flags=re.M)
cfg = re.sub(r"^PMAX_MAP .*$", f"PMAX_MAP 1 {bps} 0.20", cfg, flags=re.M)
(out / "config.txt").write_text(cfg)

starts = "\n".join(
    f"  - {{type: bulk, src: h{i}, dst: h0, bytes: {size}, start: {10 + (i - 1) * stagger:g}us}}"
    for i in range(1, n + 1))
print(f"""name: fidelity-incast{n}
description: {n}:1 incast of {size} bytes at {gbps} Gb/s, DCQCN as HPCC's simulator runs it
seed: 1
duration: 100ms
fabric:
  type: roce
  mtu: 1024
  pfc: true
  ecn: {{enabled: true, kmin: {kmin * 1000}, kmax: {kmax * 1000}, pmax: 0.2}}
  cc: dcqcn
  dcqcn: hpcc
  buffer: 32MB
topology:
  builder: star
  hosts: {n + 1}
  link: {{rate: {gbps}Gbps, delay: 1us}}
workloads:
{starts}
record:
  rate_interval: 10us""")
