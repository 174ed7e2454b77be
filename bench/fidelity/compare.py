#!/usr/bin/env python3
"""One row of bench/hpcc-fidelity: HPCC's fct.txt beside a fabemu results folder.

Usage: compare.py NAME HPCC_FCT_TXT FABEMU_RESULTS_DIR
Both fct.txt files have HPCC's columns (sip dip sport dport bytes start_ns fct_ns
ideal_ns). Rates are wire rates: a 1024-byte payload is a 1110-byte frame on the wire
(Ethernet, 802.1Q, IPv4, UDP, BTH, ICRC, FCS, preamble and gap).
"""
import csv
import json
import statistics
import sys
from pathlib import Path

WIRE = 1110 / 1024


def fcts(path):
    rows = []
    for line in Path(path).read_text().splitlines():
        p = line.split()
        if len(p) >= 8:
            rows.append((int(p[5]), int(p[6])))  # start_ns, fct_ns
    return rows


def summary(rows):
    us = sorted(f / 1000 for _, f in rows)
    return statistics.median(us), max(s + f for s, f in rows) / 1000


def mean_rate(tput, flow, t0, t1):
    v = [float(r["gbps"]) for r in tput if r["flow"] == str(flow) and t0 <= int(r["time_ns"]) < t1]
    return statistics.mean(v) * WIRE if v else float("nan")


def main():
    name, hpcc_fct, fe_dir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    h = fcts(hpcc_fct)
    if not (fe_dir / "fct.txt").exists():
        print(f"{name:24} fabemu wrote no results: see its log")
        return 1
    f = fcts(fe_dir / "fct.txt")
    s = json.loads((fe_dir / "summary.json").read_text())
    stats = s.get("flow_stats", {})
    not_done = stats.get("count", len(f)) - len(f)
    hm, hl = summary(h)
    fm, fl = summary(f) if f else (float("nan"), float("nan"))
    print(f"{name:24} flows {len(h):3}  median FCT hpcc {hm:9.1f} fabemu {fm:9.1f} us ({fm / hm - 1:+6.1%})"
          f"  last end hpcc {hl:9.1f} fabemu {fl:9.1f} us ({fl / hl - 1:+6.1%})"
          f"  fabemu flows not completed: {not_done}")
    starts = sorted({st for st, _ in f})
    if len(f) == 2 and len(starts) == 2 and (fe_dir / "throughput.csv").exists():
        tput = list(csv.DictReader(open(fe_dir / "throughput.csv")))
        first_end = min(st + ft for st, ft in f)
        lone = mean_rate(tput, 0, 1_000_000, starts[1])
        a = mean_rate(tput, 0, starts[1] + 5_000_000, first_end)
        b = mean_rate(tput, 1, starts[1] + 5_000_000, first_end)
        print(f"{'':24} fabemu wire rates: lone flow {lone:.1f} Gb/s; shared {a:.1f} / {b:.1f} Gb/s "
              f"(from 5 ms after the second start to the first finish)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
