"""The GPU suite's expected table (expected.json): its schema, validation and one-line summary.

Stdlib only; tests/gpu/test_run_logic.py checks the detector names against the collector's
sources.
"""
import json
import os

# Every detector name a report can carry (analysis/detectors/*.cc, step_report.cc,
# step_time_straggler.cc); test_run_logic.py checks this list against the collector's sources.
KNOWN_DETECTORS = frozenset({
    "sync_stall", "launch_storm", "copy_dominated", "input_stall", "fp32_gemm", "alloc_churn",
    "gpu_bound", "gpu_idle", "warmup", "outlier_step", "new_kernels", "memory_growth",
    "straggler", "straggler_wait", "exposed_comm", "comm_storm", "unfused_elementwise",
    "unfused_attention", "host_bound", "cuda_api_bound",
})
# insufficient_data is not a detector: a step whose recording cannot carry a verdict says so.
PRIMARY_VALUES = KNOWN_DETECTORS | {"none", "insufficient_data"}

KINDS = ("python", "torchrun", "binary", "command")
EXPECT_KEYS = {"primary", "absent", "present", "present_any", "warmup", "exact_counts",
               "min_steady_steps", "per_rank"}
WORKLOAD_KEYS = {"name", "kind", "script", "binary", "argv", "args", "nproc", "timeout_s",
                 "twin_of", "advisory", "expect", "why", "env"}




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
    counters = result.setdefault("counters", {})
    for name, bounds in counters.items():
        if name not in result["overhead"]:
            raise ValueError(f"counters: {name!r} is read in its overhead run: list it in overhead")
        for b in bounds:
            if set(b) != {"class", "reading", "min"} or b["reading"] not in (
                    "tensor_active_pct", "dram_throughput_pct"):
                raise ValueError(f"counters: {name!r}: each bound is {{class, reading, min}}, "
                                 f"reading tensor_active_pct or dram_throughput_pct")
    return result


def load_expected(path):
    with open(path) as f:
        doc = json.load(f)
    return parse_expected(doc, os.path.join(os.path.dirname(os.path.abspath(path)), "workloads"))


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
