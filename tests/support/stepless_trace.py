#!/usr/bin/env python3
"""Writes a Kineto trace of N identical 1 us kernels and no ProfilerStep (issue 34's probe).

  stepless_trace.py OUT.json[.gz] N [--gap-us G] [--launches] [--name-bytes B]

Kernel i starts at i * (1 + G) us on one stream (G = 1 by default), so a run of N kernels lasts
about 2N us; N events, or 2N with --launches (each kernel's cudaLaunchKernel call). --name-bytes makes the kernel's name B bytes long (the
huge-string probe). Written streaming: a 10^7-event file needs no memory of its size here.
"""
import argparse
import gzip


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("n", type=int)
    p.add_argument("--gap-us", type=int, default=1)
    p.add_argument("--launches", action="store_true")
    p.add_argument("--name-bytes", type=int, default=0)
    a = p.parse_args()
    name = "void elementwise_kernel<float>(float*, int)"
    if a.name_bytes > 0:
        name = ("k" * a.name_bytes)
    opener = gzip.open if a.out.endswith(".gz") else open
    with opener(a.out, "wt") as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [], "traceEvents": [\n')
        step = 1 + a.gap_us
        chunk = []
        for i in range(a.n):
            ts = i * step
            sep = "" if i == 0 else ",\n"
            if a.launches:
                chunk.append(
                    f'{sep}{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, '
                    f'"tid": 1, "ts": {ts}, "dur": 1, "args": {{"correlation": {i + 1}, "cbid": 211}}}}')
                sep = ",\n"
            chunk.append(
                f'{sep}{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, '
                f'"ts": {ts}.5, "dur": 1, "args": {{"device": 0, "stream": 7, "correlation": {i + 1}, '
                f'"grid": [1, 1, 1], "block": [128, 1, 1]}}}}')
            if len(chunk) >= 10000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
        f.write('\n]}\n')


if __name__ == "__main__":
    main()
