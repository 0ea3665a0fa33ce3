"""The GPU suite's pure logic: the expected table, verdicts over `gpuspy --json report` output,
event counting (gpuspy events and torch.profiler traces, per step) and the results page.

No processes, no GPU, stdlib only: tests/gpu/test_run_logic.py tests all of it on canned and
live gpuspyd output; tests/gpu/suite.py runs the workloads and calls into it.
"""
import bisect
import collections
import json
import os
import statistics

# Every detector name a report can carry (collector/analysis/detectors/*.cc, step_report.cc,
# step_series.cc); test_run_logic.py checks this list against the collector's sources.
KNOWN_DETECTORS = frozenset({
    "sync_stall", "launch_storm", "copy_dominated", "input_stall", "fp32_gemm", "alloc_churn",
    "gpu_bound", "gpu_idle", "warmup", "outlier_step", "new_kernels", "memory_growth",
    "straggler",
})
PRIMARY_VALUES = KNOWN_DETECTORS | {"none"}

# A twin is "flagged" with a pathology when the finding shows up in more than this share of its
# steady steps (as primary or not); a stray step or two is noise, not a verdict.
ABSENT_MAX_SHARE = 0.25
# A finding that must be present must be in at least this share of the steady steps.
PRESENT_MIN_SHARE = 0.5
DEFAULT_MIN_STEADY_STEPS = 10
# Event counts of gpuspy and torch.profiler for the same steps must agree within this.
COUNT_TOLERANCE = 0.05

KINDS = ("python", "torchrun", "binary", "command")
EXPECT_KEYS = {"primary", "absent", "present", "present_any", "warmup", "exact_counts",
               "min_steady_steps", "per_rank"}
WORKLOAD_KEYS = {"name", "kind", "script", "binary", "argv", "args", "nproc", "timeout_s",
                 "twin_of", "advisory", "expect", "why", "env"}


# --- the expected table -------------------------------------------------------------------------

def _check_expect(where, expect, per_rank_allowed=True):
    if not isinstance(expect, dict):
        raise ValueError(f"{where}: expect must be an object")
    unknown = set(expect) - EXPECT_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown expect keys {sorted(unknown)}")
    for key in ("primary", "absent", "present", "present_any"):
        values = expect.get(key, [])
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValueError(f"{where}: {key} must be a list of detector names")
        allowed = PRIMARY_VALUES if key == "primary" else KNOWN_DETECTORS
        bad = [v for v in values if v not in allowed]
        if bad:
            raise ValueError(f"{where}: {key} names unknown detectors {bad}")
    if "warmup" in expect:
        w = expect["warmup"]
        if not isinstance(w, dict) or not isinstance(w.get("max_steps"), int):
            raise ValueError(f"{where}: warmup must be {{\"max_steps\": N}}")
    if "per_rank" in expect:
        if not per_rank_allowed:
            raise ValueError(f"{where}: per_rank cannot nest")
        for r, sub in expect["per_rank"].items():
            if not r.isdigit():
                raise ValueError(f"{where}: per_rank keys are rank numbers, got {r!r}")
            _check_expect(f"{where}.per_rank[{r}]", sub, per_rank_allowed=False)
    checks = set(expect) - {"min_steady_steps", "per_rank"}
    if not checks and "per_rank" not in expect:
        raise ValueError(f"{where}: expect checks nothing")


def parse_expected(doc, workloads_dir=None):
    """Validates the expected table (a dict as loaded from expected.json); returns it with each
    workload's defaults filled in. Raises ValueError naming the first problem."""
    if not isinstance(doc, dict) or not isinstance(doc.get("workloads"), list):
        raise ValueError("expected.json: needs a \"workloads\" list")
    defaults = doc.get("defaults", {})
    names = set()
    out = []
    for i, w in enumerate(doc["workloads"]):
        where = f"workloads[{i}]"
        if not isinstance(w, dict) or not isinstance(w.get("name"), str):
            raise ValueError(f"{where}: needs a name")
        where = f"workload {w['name']!r}"
        unknown = set(w) - WORKLOAD_KEYS
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        if w["name"] in names:
            raise ValueError(f"{where}: duplicate name")
        names.add(w["name"])
        kind = w.get("kind", "python")
        if kind not in KINDS:
            raise ValueError(f"{where}: kind must be one of {KINDS}")
        if kind in ("python", "torchrun"):
            if not isinstance(w.get("script"), str):
                raise ValueError(f"{where}: needs a script")
            if workloads_dir and not os.path.isfile(os.path.join(workloads_dir, w["script"])):
                raise ValueError(f"{where}: no such script {w['script']}")
        elif kind == "binary" and not isinstance(w.get("binary"), str):
            raise ValueError(f"{where}: needs a binary")
        elif kind == "command" and not (isinstance(w.get("argv"), list) and w["argv"]):
            raise ValueError(f"{where}: needs argv (a list)")
        if kind == "torchrun" and not isinstance(w.get("nproc"), int):
            raise ValueError(f"{where}: torchrun needs nproc")
        if not isinstance(w.get("args", []), list):
            raise ValueError(f"{where}: args must be a list")
        _check_expect(where, w.get("expect"))
        filled = dict(w)
        filled.setdefault("kind", kind)
        filled.setdefault("args", [])
        filled.setdefault("timeout_s", defaults.get("timeout_s", 180))
        filled.setdefault("advisory", False)
        filled.setdefault("env", {})
        out.append(filled)
    for w in out:
        if "twin_of" in w and w["twin_of"] not in names:
            raise ValueError(f"workload {w['name']!r}: twin_of names no workload")
    result = dict(doc)
    result["workloads"] = out
    result.setdefault("defaults", {})
    for key in ("overhead", "event_counts"):
        listed = result.get(key, [])
        bad = [n for n in listed if n not in names]
        if bad:
            raise ValueError(f"{key}: names no workload: {bad}")
        result[key] = listed
    return result


def load_expected(path):
    with open(path) as f:
        doc = json.load(f)
    return parse_expected(doc, os.path.join(os.path.dirname(os.path.abspath(path)), "workloads"))


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


# --- event counts -------------------------------------------------------------------------------

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


# --- overhead -----------------------------------------------------------------------------------

def steady_median_ms(step_ms, skip=5):
    """Median step time, leaving out the first `skip` steps (warm-up)."""
    tail = step_ms[skip:] if len(step_ms) > skip + 2 else step_ms
    return statistics.median(tail) if tail else float("nan")


# --- the results page ---------------------------------------------------------------------------

def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _short(name, n=70):
    return name if len(name) <= n else name[:n - 1] + "…"


def render_markdown(state):
    """state: what suite.py gathered (see Suite.state there)."""
    s = state
    lines = [f"# GPU validation suite — {s['date']}", ""]
    sysinfo = s.get("system", {})
    for key in ("gpu", "driver", "cuda", "torch", "triton", "nvcc", "gpuspy", "host"):
        if sysinfo.get(key):
            lines.append(f"- **{key}**: {_cell(sysinfo[key])}")
    lines.append(f"- **command**: `{s.get('command', '')}`")
    lines.append(f"- **suite time**: {s.get('elapsed_s', 0):.0f} s")
    lines.append("")
    lines.append(f"**{s.get('verdict_line', 'incomplete')}**")
    lines.append("")
    for note in s.get("setup_notes", []):
        lines.append(f"> {_cell(note)}")
    if s.get("setup_notes"):
        lines.append("")

    lines += ["## Verdicts (steady-state steps)", "",
              "| workload | twin of | expected | steady primary (steps) | steady/total | "
              "median step | GPU busy | result | details |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in s.get("verdicts", []):
        expected = r.get("expected_text", "")
        cells = {"primary": [], "steps": [], "wall": [], "busy": []}
        for label, sm in r.get("groups") or []:
            if not sm:
                continue
            tag = f"{label}: " if label else ""
            cells["primary"].append(f"{tag}{sm['majority']} ({sm['majority_steps']}/{sm['steady']})")
            cells["steps"].append(f"{tag}{sm['steady']}/{sm['steps']}")
            cells["wall"].append(f"{tag}{sm['median_wall_ms']:.2f} ms")
            cells["busy"].append(f"{tag}{_pct(sm['median_gpu_busy'])}")
        primary, steps, wall, busy = ("<br>".join(cells[k]) or "-"
                                      for k in ("primary", "steps", "wall", "busy"))
        result = r["result"] + (" (advisory)" if r.get("advisory") else "")
        details = "; ".join(r.get("failures", []) + r.get("notes", []))
        lines.append(f"| {r['name']} | {r.get('twin_of', '') or ''} | {_cell(expected)} | "
                     f"{_cell(primary)} | {steps} | {wall} | {busy} | **{result}** | "
                     f"{_cell(details)} |")
    lines.append("")

    details = [r for r in s.get("verdicts", []) if r.get("groups")]
    if details:
        lines += ["## What gpuspy saw, per workload", "",
                  "Medians over steady steps; idle shares are of the step's wall time.", ""]
        for r in details:
            for label, sm in r["groups"]:
                if not sm:
                    continue
                title = r["name"] + (f" ({label})" if label else "")
                hist = ", ".join(f"{k} {v}" for k, v in sorted(sm["histogram"].items(),
                                                               key=lambda kv: -kv[1]))
                found = ", ".join(f"{k} {_pct(v)}" for k, v in sorted(sm["findings"].items(),
                                                                      key=lambda kv: -kv[1]))
                lines.append(f"- **{title}**: primaries {hist or '-'}; findings {found or '-'}; "
                             f"{sm['median_kernels']:.0f} kernels, {sm['median_memcpys']:.0f} "
                             f"memcpys per step; exposed copy {_pct(sm['median_exposed_copy'])}, "
                             f"idle sync-blocked {_pct(sm['median_idle_sync'])}, launch-bound "
                             f"{_pct(sm['median_idle_launch'])}, host-other "
                             f"{_pct(sm['median_idle_host'])}")
                for name, tc in sm["top_kernels"]:
                    lines.append(f"  - `{_cell(_short(name))}`{' (tensor cores)' if tc else ''}")
        lines.append("")

    if s.get("overhead"):
        lines += ["## Step-time overhead", "",
                  "Median step time over steps 5.. of one run each: not injected, injected dormant "
                  "(`GPUSPY_MODE=ondemand`, never attached), injected capturing (`always`).", "",
                  "| workload | not injected | dormant | capturing | dormant vs not | "
                  "capturing vs not |", "| --- | --- | --- | --- | --- | --- |"]
        for o in s["overhead"]:
            if o.get("error"):
                lines.append(f"| {o['name']} | {_cell(o['error'])} | | | | |")
                continue
            base = o["baseline_ms"]

            def rel(x):
                return f"{100 * (x / base - 1):+.1f}%" if base else "-"
            lines.append(f"| {o['name']} | {base:.3f} ms | {o['dormant_ms']:.3f} ms | "
                         f"{o['capturing_ms']:.3f} ms | {rel(o['dormant_ms'])} | "
                         f"{rel(o['capturing_ms'])} |")
        lines.append("")

    if s.get("counts"):
        lines += ["## Event counts vs torch.profiler", "",
                  "GPU events per step, each assigned to the step whose host range holds its launch "
                  "call; the same steps of two runs of the same deterministic workload (one under "
                  "torch.profiler, one injected). Tolerance "
                  f"{100 * COUNT_TOLERANCE:.0f}%.", "",
                  "| workload | steps | kind | torch.profiler | gpuspy | diff | ok |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for c in s["counts"]:
            if c.get("error"):
                lines.append(f"| {c['name']} | | | {_cell(c['error'])} | | | **FAIL** |")
                continue
            for kind, ref, got, diff, ok in c["rows"]:
                d = "inf" if diff == float("inf") else f"{100 * diff:+.2f}%"
                lines.append(f"| {c['name']} | {c['steps']} | {kind} | {ref} | {got} | {d} | "
                             f"{'yes' if ok else '**no**'} |")
        lines.append("")

    if s.get("logs"):
        lines += [f"Logs: `{s['logs']}` (each run's stdout/stderr, gpuspyd's log, the reports "
                  "as JSON).", ""]
    return "\n".join(lines)


def expected_text(expect):
    parts = []
    if expect.get("primary"):
        parts.append("/".join(expect["primary"]))
    if expect.get("absent"):
        parts.append("not " + "/".join(expect["absent"]))
    if expect.get("present"):
        parts.append("has " + "/".join(expect["present"]))
    if expect.get("present_any"):
        parts.append("has " + "/".join(expect["present_any"]) + " (once)")
    if "warmup" in expect:
        parts.append(f"step 0 warm-up, ≤{expect['warmup']['max_steps']} warm-up steps")
    if expect.get("exact_counts"):
        parts.append("exact kernel/memcpy counts")
    for r, sub in sorted(expect.get("per_rank", {}).items()):
        parts.append(f"rank {r}: {expected_text(sub)}")
    return ", ".join(parts)
