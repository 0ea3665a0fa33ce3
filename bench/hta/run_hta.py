#!/usr/bin/env python3
"""One Holistic Trace Analysis (HTA) run on one job, for bench/hta_side_by_side.sh.

Usage:
  run_hta.py --check                      # can pandas and HTA be imported? (one line, exit 2 if not)
  run_hta.py [--backend json|ijson] TRACE [TRACE ...]

The traces are the ranks of one job (Kineto JSON or .json.gz). They are symlinked into a fresh
temporary directory as rank-<i>.json[.gz] and HTA is pointed at it with
TraceAnalysis(trace_dir=...), as a user would; HTA takes each file's rank from the
"distributedInfo": {"rank": N} in its text, not from its name. If that gives fewer ranks than
files (files without a rank all become rank 0), the driver passes trace_files={i: path} in the
order given instead and says so ("ranks": "by order").

Timed, in one process (HTA's defaults otherwise, no plots: visualize=False):
  import     import hta.trace_analysis (pulls in pandas, numpy, plotly)
  parse      TraceAnalysis(...) construction: parse every rank, align, filter
  idle       get_idle_time_breakdown(ranks=<all ranks>)
  kernels    get_gpu_kernel_breakdown()
  temporal   get_temporal_breakdown()

Prints one JSON line on stdout: {"ok": true, "phases": {...seconds...}, "ranks": [...], ...}
or {"ok": false, "error": "<phase>: <one-line reason>"} with exit status 1. HTA's own logging
goes to stderr. HTA_SRC (default /work/hta-src) is put at the front of sys.path.
"""
import json
import os
import sys
import tempfile
import time

T0 = time.perf_counter()


def one_line(exc):
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").strip()
    return text[:200]


def add_hta_to_path():
    src = os.environ.get("HTA_SRC", "/work/hta-src")
    if not os.path.isfile(os.path.join(src, "hta", "trace_analysis.py")):
        return src, False
    sys.path.insert(0, src)
    return src, True


def check():
    src, found = add_hta_to_path()
    try:
        import numpy
        import pandas
    except ImportError as exc:
        print(f"pandas/numpy not importable by {sys.executable} ({one_line(exc)}); "
              "on Debian: apt-get install python3-pandas python3-numpy", file=sys.stderr)
        return 2
    if not found:
        print(f"HTA source not found: no {src}/hta/trace_analysis.py (set HTA_SRC)", file=sys.stderr)
        return 2
    try:
        import hta
        from hta.trace_analysis import TraceAnalysis  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any import failure is fatal here
        print(f"HTA in {src} not importable by {sys.executable}: {one_line(exc)}", file=sys.stderr)
        return 2
    commit = ""
    for name in ("HTA_COMMIT",):
        path = os.path.join(src, name)
        if os.path.isfile(path):
            commit = open(path).read().strip()
    if not commit and os.path.isdir(os.path.join(src, ".git")):
        import subprocess
        commit = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    version = ""
    try:
        from hta.version import __version__ as version
    except Exception:  # noqa: BLE001
        pass
    print(json.dumps({"hta_src": src, "hta_commit": commit or "unknown", "hta_version": version,
                      "python": sys.version.split()[0], "pandas": pandas.__version__,
                      "numpy": numpy.__version__}))
    return 0


def run(files, backend):
    phases = {}
    result = {"ok": False, "phases": phases}
    phase = "import"
    try:
        add_hta_to_path()
        from hta.common import trace_parser
        from hta.configs.parser_config import ParserBackend
        from hta.trace_analysis import TraceAnalysis

        if backend == "ijson":
            # HTA's documented fast path (needs ijson with the yajl2_c backend); the default is JSON.
            trace_parser.set_default_trace_parsing_backend(ParserBackend.IJSON_BATCH_AND_COMPRESS)
        phases["import"] = time.perf_counter() - T0

        phase = "parse"
        with tempfile.TemporaryDirectory(prefix="hta-job-") as job:
            for i, f in enumerate(files):
                ext = ".json.gz" if f.endswith(".gz") else ".json"
                os.symlink(os.path.abspath(f), os.path.join(job, f"rank-{i}{ext}"))
            t = time.perf_counter()
            from hta.common.trace_file import get_trace_files
            found = get_trace_files(job)
            if len(found) == len(files):
                analyzer = TraceAnalysis(trace_dir=job)
                result["ranks_from"] = "trace"
            else:
                analyzer = TraceAnalysis(
                    trace_files={i: os.path.join(job, n) for i, n in enumerate(sorted(
                        os.listdir(job), key=lambda n: int(n.split("-")[1].split(".")[0])))},
                    trace_dir=job)
                result["ranks_from"] = "by order"
            phases["parse"] = time.perf_counter() - t
            ranks = analyzer.t.get_ranks()
            result["ranks"] = ranks
            if not ranks:
                raise RuntimeError("no rank has analyzable events")

            phase = "idle"
            t = time.perf_counter()
            idle, _ = analyzer.get_idle_time_breakdown(ranks=ranks, visualize=False)
            phases["idle"] = time.perf_counter() - t

            phase = "kernels"
            t = time.perf_counter()
            kernel_types, kernels = analyzer.get_gpu_kernel_breakdown(visualize=False)
            phases["kernels"] = time.perf_counter() - t

            phase = "temporal"
            t = time.perf_counter()
            temporal = analyzer.get_temporal_breakdown(visualize=False)
            phases["temporal"] = time.perf_counter() - t

            result["rows"] = {"idle": len(idle), "kernel_types": len(kernel_types),
                              "kernels": len(kernels), "temporal": len(temporal)}
            result["events"] = int(sum(len(df) for df in analyzer.t.traces.values()))
            empty = [k for k, v in result["rows"].items() if v == 0 and k != "kernels"]
            if empty:
                raise RuntimeError("empty result: " + ", ".join(empty))
        result["ok"] = True
    except BaseException as exc:  # noqa: BLE001 - report any failure as one line
        if isinstance(exc, KeyboardInterrupt):
            raise
        result["error"] = f"{phase}: {one_line(exc)}"
    phases["total"] = time.perf_counter() - T0
    sys.stdout.flush()
    print(json.dumps(result), flush=True)
    return 0 if result["ok"] else 1


def main():
    args = sys.argv[1:]
    if args == ["--check"]:
        return check()
    backend = "json"
    if len(args) >= 2 and args[0] == "--backend":
        backend = args[1]
        args = args[2:]
    if backend not in ("json", "ijson") or not args or any(a.startswith("--") for a in args):
        print(__doc__, file=sys.stderr)
        return 2
    return run(args, backend)


if __name__ == "__main__":
    sys.exit(main())
