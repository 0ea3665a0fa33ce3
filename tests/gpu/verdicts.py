"""The GPU suite's verdicts over `gpuspy --json report --all` output: one workload's steady-state
steps against its row of the expected table (expected_table.py).

No processes, no GPU, stdlib only: tests/gpu/test_run_logic.py tests it on canned and live
gpuspyd output; tests/gpu/suite.py runs the workloads and calls into it.
"""
import collections
import statistics

# A twin is "flagged" with a pathology when the finding shows up in more than this share of its
# steady steps (as primary or not); a stray step or two is noise, not a verdict.
ABSENT_MAX_SHARE = 0.25
# A finding that must be present must be in at least this share of the steady steps.
PRESENT_MIN_SHARE = 0.5
DEFAULT_MIN_STEADY_STEPS = 10


# --- report rows --------------------------------------------------------------------------------

def _int(v):
    return int(v) if v not in (None, "") else 0


def step_rows(report_json):
    """`gpuspy --json report --all` -> one flat dict per step. proto3 JSON leaves out defaults:
    a missing steady_state is false, a missing number is 0, int64s come as strings."""
    rows = []
    for r in report_json.get("reports", []):
        step = r.get("step", {})
        b = r.get("breakdown", {})
        rows.append({
            "process_id": _int(step.get("process_id")),
            "number": _int(step.get("number")),
            "start_ns": _int(step.get("start_ns")),
            "end_ns": _int(step.get("end_ns")),
            "source": step.get("source", ""),
            "steady": bool(r.get("steady_state", False)),
            "primary": r.get("primary_bottleneck") or "none",
            "findings": [f.get("detector", "") for f in r.get("findings", [])],
            "wall_ns": _int(b.get("wall_ns")),
            "gpu_busy_ns": _int(b.get("gpu_busy_ns")),
            "kernel_count": _int(b.get("kernel_count")),
            "memcpy_count": _int(b.get("memcpy_count")),
            "memcpy_not_overlapped_ns": _int(b.get("memcpy_not_overlapped_ns")),
            "idle_sync_blocked_ns": _int(b.get("idle_sync_blocked_ns")),
            "idle_launch_bound_ns": _int(b.get("idle_launch_bound_ns")),
            "idle_host_other_ns": _int(b.get("idle_host_other_ns")),
            "idle_cuda_call_ns": _int(b.get("idle_cuda_call_ns")),
            "top_kernels": [(k.get("name", ""), bool(k.get("tensor_cores", False)),
                             _int(k.get("total_ns"))) for k in r.get("top_kernels", [])[:3]],
        })
    rows.sort(key=lambda x: (x["process_id"], x["number"]))
    return rows


def nvtx_rows(rows):
    # Every workload marks its steps with NVTX; processes without them (a compile worker that
    # touched CUDA, say) get period/window steps, which are not the workload's steps.
    return [r for r in rows if r["source"].startswith("nvtx:")]


def ranks_by_process(jobs_json, job):
    """process_id -> rank, from `gpuspy --json jobs --job J`."""
    out = {}
    for j in jobs_json.get("jobs", []):
        if j.get("job_id") != job:
            continue
        for p in j.get("processes", []):
            out[_int(p.get("process_id"))] = _int(p.get("identity", {}).get("rank"))
    return out


# --- verdicts -----------------------------------------------------------------------------------

class Outcome:
    """The result of one check list on one group of steps."""

    def __init__(self):
        self.failures = []
        self.notes = []

    @property
    def ok(self):
        return not self.failures


def _share(n, total):
    return n / total if total else 0.0


def _pct(x):
    return f"{100 * x:.0f}%"


def primary_histogram(rows):
    return collections.Counter(r["primary"] for r in rows if r["steady"])


def majority_primary(rows):
    """(detector, steps, steady steps) of the most common primary over steady steps."""
    hist = primary_histogram(rows)
    total = sum(hist.values())
    if not total:
        return ("-", 0, 0)
    det, n = sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return (det, n, total)


def finding_share(rows, detector):
    steady = [r for r in rows if r["steady"]]
    return _share(sum(1 for r in steady if detector in r["findings"]), len(steady))


def check_group(expect, rows, program=None, label=""):
    """Applies one expectation (without per_rank) to one process's (or one rank's) NVTX steps."""
    out = Outcome()
    prefix = f"{label}: " if label else ""
    steady = [r for r in rows if r["steady"]]
    need = expect.get("min_steady_steps", DEFAULT_MIN_STEADY_STEPS)
    if not rows:
        out.failures.append(prefix + "no NVTX steps captured")
        return out
    if len(steady) < need:
        out.failures.append(prefix + f"only {len(steady)} steady steps of {len(rows)} "
                                     f"(need {need})")
    total = len(steady)
    if expect.get("primary") and total:
        wanted = set(expect["primary"])
        hits = sum(1 for r in steady if r["primary"] in wanted)
        det, n, _ = majority_primary(rows)
        if _share(hits, total) <= 0.5:
            out.failures.append(prefix + f"steady primary is {det} in {n}/{total} steps, expected "
                                         f"{'/'.join(expect['primary'])} (got it in {hits})")
    for det in expect.get("absent", []):
        share = finding_share(rows, det)
        if share > ABSENT_MAX_SHARE:
            as_primary = sum(1 for r in steady if r["primary"] == det)
            out.failures.append(prefix + f"flagged with {det}: a finding in {_pct(share)} of "
                                         f"steady steps (primary in {as_primary}/{total})")
        elif share > 0:
            out.notes.append(prefix + f"{det} in {_pct(share)} of steady steps (tolerated)")
    for det in expect.get("present", []):
        share = finding_share(rows, det)
        if share < PRESENT_MIN_SHARE:
            out.failures.append(prefix + f"{det} found in {_pct(share)} of steady steps, expected "
                                         f"at least {_pct(PRESENT_MIN_SHARE)}")
    for det in expect.get("present_any", []):
        if not any(det in r["findings"] for r in steady):
            out.failures.append(prefix + f"no steady step has a {det} finding")
    if "warmup" in expect:
        by_process = collections.defaultdict(list)
        for r in rows:
            by_process[r["process_id"]].append(r)
        for pid, prow in by_process.items():
            prow = sorted(prow, key=lambda r: r["number"])
            first = prow[0]
            if first["primary"] != "warmup" or first["steady"]:
                out.failures.append(prefix + f"step {first['number']} is not a warm-up step "
                                             f"(primary {first['primary']})")
            leading = 0
            while leading < len(prow) and not prow[leading]["steady"]:
                leading += 1
            if leading > expect["warmup"]["max_steps"]:
                out.failures.append(prefix + f"{leading} leading non-steady steps, expected at "
                                             f"most {expect['warmup']['max_steps']}")
            out.notes.append(prefix + f"{leading} warm-up step(s)")
    if expect.get("exact_counts"):
        want = (program or {}).get("expect_per_step")
        if not want:
            out.failures.append(prefix + "the program reported no expect_per_step counts")
        else:
            bad = [r for r in steady if r["kernel_count"] != want.get("kernels", 0)
                   or r["memcpy_count"] != want.get("memcpys", 0)]
            if bad:
                shown = ", ".join(f"step {r['number']}: {r['kernel_count']} kernels/"
                                  f"{r['memcpy_count']} memcpys" for r in bad[:4])
                out.failures.append(prefix + f"{len(bad)}/{total} steady steps differ from "
                                             f"{want.get('kernels', 0)} kernels/"
                                             f"{want.get('memcpys', 0)} memcpys per step ({shown})")
            else:
                out.notes.append(prefix + f"exactly {want.get('kernels', 0)} kernels and "
                                          f"{want.get('memcpys', 0)} memcpys in all {total} "
                                          "steady steps")
    return out


def evaluate(expect, report_json, jobs_json=None, job=None, programs=None):
    """Verdict of one workload: ("PASS" | "FAIL", failures, notes, per-group summaries)."""
    rows = nvtx_rows(step_rows(report_json))
    programs = programs or []
    outcomes = []
    groups = []
    if "per_rank" in expect:
        ranks = ranks_by_process(jobs_json or {}, job)
        for rank_key, sub in sorted(expect["per_rank"].items()):
            rank = int(rank_key)
            pids = {pid for pid, r in ranks.items() if r == rank}
            grows = [r for r in rows if r["process_id"] in pids]
            program = next((p for p in programs if p.get("rank") == rank), None)
            sub = dict(sub)
            sub.setdefault("min_steady_steps",
                           expect.get("min_steady_steps", DEFAULT_MIN_STEADY_STEPS))
            outcomes.append(check_group(sub, grows, program, label=f"rank {rank}"))
            groups.append((f"rank {rank}", grows))
    else:
        program = programs[0] if programs else None
        outcomes.append(check_group(expect, rows, program))
        groups.append(("", rows))
        pids = {r["process_id"] for r in rows}
        if len(pids) > 1:
            outcomes[-1].notes.append(f"{len(pids)} processes with NVTX steps, judged together")
    failures = [f for o in outcomes for f in o.failures]
    notes = [n for o in outcomes for n in o.notes]
    return ("PASS" if not failures else "FAIL", failures, notes, groups)


def group_summary(rows):
    """Figures for the results page: steady-step medians and the primary histogram."""
    steady = [r for r in rows if r["steady"]] or rows
    if not steady:
        return {}

    def med(key):
        return statistics.median(r[key] for r in steady)

    wall = med("wall_ns")
    det, n, total = majority_primary(rows)
    top = collections.Counter()
    tensor = {}
    for r in steady:
        for name, tc, ns in r["top_kernels"]:
            top[name] += ns
            tensor[name] = tc
    findings = collections.Counter(d for r in steady for d in set(r["findings"]))
    return {
        "steps": len(rows),
        "steady": sum(1 for r in rows if r["steady"]),
        "majority": det,
        "majority_steps": n,
        "histogram": dict(primary_histogram(rows)),
        "findings": {d: round(_share(c, len(steady)), 2) for d, c in findings.items()},
        "median_wall_ms": wall / 1e6,
        "median_gpu_busy": _share(med("gpu_busy_ns"), wall),
        "median_kernels": med("kernel_count"),
        "median_memcpys": med("memcpy_count"),
        "median_exposed_copy": _share(med("memcpy_not_overlapped_ns"), wall),
        "median_idle_sync": _share(med("idle_sync_blocked_ns"), wall),
        "median_idle_launch": _share(med("idle_launch_bound_ns"), wall),
        "median_idle_host": _share(med("idle_host_other_ns"), wall),
        "top_kernels": [(name, tensor[name]) for name, _ in top.most_common(3)],
    }


# --- overhead -----------------------------------------------------------------------------------

def steady_median_ms(step_ms, skip=5):
    """Median step time, leaving out the first `skip` steps (warm-up)."""
    tail = step_ms[skip:] if len(step_ms) > skip + 2 else step_ms
    return statistics.median(tail) if tail else float("nan")
