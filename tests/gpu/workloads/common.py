"""The step loop every GPU-suite workload shares.

Each step is an NVTX range "ProfilerStep#N" (gpuspyd's default --step-pattern) and ends with a
synchronize of the current stream *inside* the range, so a step's GPU work falls inside its window
and the host-measured step time is the real one. At exit the script prints one line

    GPUSUITE_RESULT {"workload": ..., "variant": ..., "rank": ..., "step_ms": [...], ...}

that tests/gpu/suite.py reads (per-step wall times for the overhead comparison, and anything a
workload adds, such as the per-step event counts it knows it produces).

--torch-profiler TRACE.json runs the same steps under torch.profiler (recording steps A-B given by
--profile-steps) and exports a Chrome trace with each step as a "GpuSuiteStep#N" annotation; the
suite compares its kernel/memcpy counts with what gpuspy captured for the same steps of an
injected run.
"""
import argparse
import json
import os
import sys
import time

# A workload that cannot run here (no Triton, say) exits with this code; the suite reports SKIPPED.
EXIT_SKIP = 77


def parse_args(description, variants=("bad",), extra=None):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--steps", type=int, default=30, help="steps to run (default 30)")
    p.add_argument("--variant", default=variants[0], choices=list(variants),
                   help="the pathology ('bad') or its fixed twin")
    p.add_argument("--torch-profiler", metavar="TRACE.json",
                   help="run under torch.profiler and export a Chrome trace here")
    p.add_argument("--profile-steps", default="10-19", metavar="A-B",
                   help="steps torch.profiler records (inclusive, A >= 1)")
    if extra is not None:
        extra(p)
    return p.parse_args()


def rank():
    return int(os.environ.get("RANK", "0"))


def busy_wait(seconds):
    """Host-side Python work (logging, metrics, formatting) that keeps the CPU, not the GPU, busy."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def run_steps(args, step_fn, workload, extra_result=None, sync=True):
    """Runs step_fn(i) for each step inside NVTX ProfilerStep#i; prints GPUSUITE_RESULT."""
    import torch

    prof = None
    first = last = -1
    if args.torch_profiler:
        first, last = (int(x) for x in args.profile_steps.split("-"))
        if first < 1 or last < first or last >= args.steps:
            sys.exit(f"--profile-steps {args.profile_steps}: need 1 <= A <= B < --steps")
        from torch.profiler import ProfilerActivity, profile, schedule

        def export(p):
            p.export_chrome_trace(args.torch_profiler)

        # wait until step A-1, warm CUPTI up during it, record A..B.
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=first - 1, warmup=1, active=last - first + 1, repeat=1),
                       on_trace_ready=export)
        prof.start()

    step_ms = []
    for i in range(args.steps):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
        annotation = None
        if prof is not None:
            annotation = torch.profiler.record_function(f"GpuSuiteStep#{i}")
            annotation.__enter__()
        t0 = time.perf_counter()
        step_fn(i)
        if sync:
            torch.cuda.current_stream().synchronize()
        t1 = time.perf_counter()
        if annotation is not None:
            annotation.__exit__(None, None, None)
        torch.cuda.nvtx.range_pop()
        step_ms.append((t1 - t0) * 1e3)
        if prof is not None:
            prof.step()
    if prof is not None:
        prof.stop()

    result = {
        "workload": workload,
        "variant": args.variant,
        "rank": rank(),
        "pid": os.getpid(),
        "steps": args.steps,
        "step_ms": [round(t, 4) for t in step_ms],
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "profiled_steps": [first, last] if prof is not None else None,
    }
    if extra_result:
        result.update(extra_result)
    print("GPUSUITE_RESULT " + json.dumps(result), flush=True)
    return result
