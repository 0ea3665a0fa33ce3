"""GPU events per step on both sides of the torch.profiler comparison: gpuspy's events and a
Kineto (torch.profiler) Chrome trace, each assigned to the step whose host range holds its launch
call. Stdlib only.
"""
import bisect
import collections

# Event counts of gpuspy and torch.profiler for the same steps must agree within this.
COUNT_TOLERANCE = 0.05


def _int(v):
    return int(v) if v not in (None, "") else 0


GPU_KINDS = ("kernels", "memcpys", "memsets")


def _assign(windows, t):
    """Index of the window [start, end) holding t, or None. windows: sorted, disjoint."""
    i = bisect.bisect_right([w[0] for w in windows], t) - 1
    if i >= 0 and t < windows[i][1]:
        return i
    return None


def _count(windows, numbers, launches, gpu_events):
    """GPU events to steps by the start of the API call that launched them (the GPU may run a
    step's work after the host left its range), else by their own start."""
    counts = {n: collections.Counter({k: 0 for k in GPU_KINDS}) for n in numbers}
    for kind, corr, start in gpu_events:
        t = launches.get(corr, start) if corr else start
        i = _assign(windows, t)
        if i is not None:
            counts[numbers[i]][kind] += 1
    return counts


def count_gpuspy_events(step_list, events_json, first, last):
    """Per-step GPU event counts from `gpuspy --json steps` rows (dicts with number/start_ns/
    end_ns) and `gpuspy --json events` over their window, for steps first..last."""
    chosen = sorted((s for s in step_list if first <= s["number"] <= last),
                    key=lambda s: s["start_ns"])
    windows = [(s["start_ns"], s["end_ns"]) for s in chosen]
    numbers = [s["number"] for s in chosen]
    launches, gpu = {}, []
    kind_of = {"kernel": "kernels", "memcpy": "memcpys", "memset": "memsets"}
    for p in events_json.get("processes", []):
        for e in p.get("events", []):
            if "api" in e:
                a = e["api"]
                launches[_int(a.get("correlation_id"))] = _int(a.get("start_ns"))
                continue
            for key, kind in kind_of.items():
                if key in e:
                    g = e[key]
                    gpu.append((kind, _int(g.get("correlation_id")), _int(g.get("start_ns"))))
    return _count(windows, numbers, launches, gpu)


def count_kineto_events(trace_json, first, last, prefix="GpuSuiteStep#"):
    """Per-step GPU event counts from a torch.profiler Chrome trace whose steps are
    record_function annotations named GpuSuiteStep#N (see workloads/common.py)."""
    steps = []
    launches, gpu = {}, []
    kind_of = {"kernel": "kernels", "gpu_memcpy": "memcpys", "gpu_memset": "memsets"}
    for e in trace_json.get("traceEvents", []):
        cat = e.get("cat", "")
        name = e.get("name", "")
        if cat == "user_annotation" and name.startswith(prefix) and e.get("ph") == "X":
            n = int(name[len(prefix):])
            if first <= n <= last:
                ts = float(e["ts"])
                steps.append((ts, ts + float(e.get("dur", 0)), n))
        elif cat in ("cuda_runtime", "cuda_driver"):
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launches[int(corr)] = float(e["ts"])
        elif cat in kind_of:
            corr = (e.get("args") or {}).get("correlation")
            gpu.append((kind_of[cat], int(corr) if corr is not None else 0, float(e["ts"])))
    steps.sort()
    return _count([(s, t) for s, t, _ in steps], [n for _, _, n in steps], launches, gpu)


def compare_counts(reference, measured, tolerance=COUNT_TOLERANCE):
    """Totals per kind over the steps both sides have: [(kind, ref, got, rel_diff, ok)], plus the
    steps compared."""
    common = sorted(set(reference) & set(measured))
    rows = []
    for kind in GPU_KINDS:
        ref = sum(reference[n][kind] for n in common)
        got = sum(measured[n][kind] for n in common)
        if ref == 0 and got == 0 and kind == "memsets":
            continue
        diff = (got - ref) / ref if ref else (0.0 if got == 0 else float("inf"))
        rows.append((kind, ref, got, diff, abs(diff) <= tolerance))
    return rows, common
