#!/usr/bin/env python3
"""Writes a large Kineto trace for the import benchmark by repeating a real one in time.

Usage: make_kineto_trace.py SOURCE.json[.gz] OUT.json[.gz] TARGET_MB [--rank N --world-size W]

The source's traceEvents are repeated back to back (each copy shifted by the source's span, step
numbers and correlation ids renumbered) until the uncompressed JSON reaches TARGET_MB, so the
result has the category mix, argument shapes and nesting of a real PyTorch profiler trace.
"""
import argparse
import gzip
import json
import re


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("target_mb", type=float)
    ap.add_argument("--rank", type=int, default=None)
    ap.add_argument("--world-size", type=int, default=None)
    a = ap.parse_args()
    opener = gzip.open if a.source.endswith(".gz") else open
    with opener(a.source, "rt") as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
    t0 = min(e["ts"] for e in timed)
    t1 = max(e["ts"] + (e.get("dur") or 0) for e in timed)
    span = (t1 - t0) * 1.01
    step_re = re.compile(r"ProfilerStep#(\d+)")
    steps = [int(m.group(1)) for e in events for m in [step_re.fullmatch(str(e.get("name", "")))] if m]
    step_count = (max(steps) - min(steps) + 1) if steps else 0
    max_corr = max([e.get("args", {}).get("correlation", 0) for e in events
                    if isinstance(e.get("args", {}).get("correlation", 0), int)] + [0]) + 1
    if a.rank is not None:
        doc["distributedInfo"] = {"backend": "nccl", "rank": a.rank, "world_size": a.world_size or 1}
    target = int(a.target_mb * 1e6)
    out_open = gzip.open if a.out.endswith(".gz") else open
    with out_open(a.out, "wt") as out:
        head = json.dumps(doc)[:-1]
        out.write(head + ', "traceEvents": [\n')
        written = len(head)
        copy = 0
        first = True
        while written < target:
            for e in events:
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    e2["ts"] = round(e2["ts"] + copy * span, 3)
                m = step_re.fullmatch(str(e2.get("name", "")))
                if m and step_count:
                    e2["name"] = "ProfilerStep#%d" % (int(m.group(1)) + copy * step_count)
                args = e2.get("args")
                if isinstance(args, dict) and isinstance(args.get("correlation"), int):
                    e2["args"] = dict(args, correlation=args["correlation"] + copy * max_corr)
                line = ("" if first else ",\n") + json.dumps(e2)
                first = False
                out.write(line)
                written += len(line)
            copy += 1
        out.write("\n]}\n")
    print("%s: %d copies, %.1f MB" % (a.out, copy, written / 1e6))


if __name__ == "__main__":
    main()
