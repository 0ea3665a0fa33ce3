"""The results page (tests/gpu/results/<date>.md) from what suite.py gathered."""
from event_counts import COUNT_TOLERANCE


def _pct(x):
    return f"{100 * x:.0f}%"


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
                  "(`GPUSPY_MODE=ondemand`, never attached), injected capturing (`always`), "
                  "capturing with the hardware counters (`GPUSPY_COUNTERS=1`).", "",
                  "| workload | not injected | dormant | capturing | + counters | dormant vs not | "
                  "capturing vs not | + counters vs not |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for o in s["overhead"]:
            if o.get("error"):
                lines.append(f"| {o['name']} | {_cell(o['error'])} | | | | |")
                continue
            base = o["baseline_ms"]

            def rel(x):
                return f"{100 * (x / base - 1):+.1f}%" if base else "-"
            counters = o.get("counters_ms")
            lines.append(f"| {o['name']} | {base:.3f} ms | {o['dormant_ms']:.3f} ms | "
                         f"{o['capturing_ms']:.3f} ms | "
                         f"{'-' if counters is None else f'{counters:.3f} ms'} | "
                         f"{rel(o['dormant_ms'])} | {rel(o['capturing_ms'])} | "
                         f"{'-' if counters is None else rel(counters)} |")
        lines.append("")
    if s.get("counters"):
        lines += ["## Hardware counters", "",
                  "Per kernel class, the median over steady steps of the counters' readings in the "
                  "run with `GPUSPY_COUNTERS=1`, against expected.json's bounds.", "",
                  "| workload | result | readings | bounds |", "| --- | --- | --- | --- |"]
        for c in s["counters"]:
            readings = "; ".join(
                f"{k}: tensor {v['tensor_active_pct']:.0f}%, DRAM {v['dram_throughput_pct']:.0f}%"
                for k, v in sorted(c.get("readings", {}).items()))
            bounds = "; ".join(f"{b['class']} {b['reading']} >= {b['min']}" for b in c["bounds"])
            lines.append(f"| {c['name']} | {c.get('result', c.get('error', '?'))} | "
                         f"{_cell(readings or c.get('error', ''))} | {bounds} |")
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
