#!/usr/bin/env python3
"""The GPU suite's logic, tested without a GPU (ctest: gpu_suite_logic_test, label unit).

- verdicts over steady steps, twin checks, per-rank checks, exact counts and the expected table,
  on canned `gpuspy --json` output (testdata/, made by gpuspyd + gpuspy-replay) and on live output
  when the build's gpuspyd, gpuspy and gpuspy-replay are given ($GPUSPY_BUILD_DIR, $REPLAY_BIN);
- event counting against torch.profiler traces;
- suite.py end to end (gpuspyd, injected runs, reports, results page, exit code) with stand-in
  workloads that replay synthetic jobs, and pack.sh on the build;
- run.sh skipping cleanly on a machine without a GPU, every workload script compiling, and
  plain_cuda.cu compiling where nvcc is installed.
"""
import copy
import glob
import json
import os
import py_compile
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "testdata")
sys.path.insert(0, HERE)
import event_counts as C  # noqa: E402
import expected_table as E  # noqa: E402
import results_page as P  # noqa: E402
import verdicts as V  # noqa: E402

NVCC = "/usr/local/cuda/bin/nvcc"


def load(name):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


def rows_of(name):
    return V.nvtx_rows(V.step_rows(load(name)))


def has_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


class ExpectedTable(unittest.TestCase):
    def test_expected_json_is_valid_and_covers_every_workload(self):
        table = E.load_expected(os.path.join(HERE, "expected.json"))
        names = {w["name"] for w in table["workloads"]}
        for required in ("healthy", "sync_stall", "sync_stall_fixed", "launch_storm",
                         "launch_storm_compiled", "copy_dominated", "copy_dominated_fixed",
                         "input_stall", "fp32_gemm", "fp32_gemm_amp", "alloc_churn",
                         "alloc_churn_fixed", "memory_leak", "warmup", "straggler", "plain_cuda",
                         "triton"):
            self.assertIn(required, names)
        scripts = {w["script"] for w in table["workloads"] if "script" in w}
        on_disk = {os.path.basename(p) for p in glob.glob(os.path.join(HERE, "workloads", "*.py"))}
        self.assertEqual(scripts, on_disk - {"common.py"}, "a workload script nobody runs")
        for w in table["workloads"]:
            if "twin_of" in w:
                pathology = next(x for x in table["workloads"] if x["name"] == w["twin_of"])
                # A twin is judged on the pathology of the workload it fixes.
                self.assertTrue(set(pathology["expect"].get("primary", [])) &
                                set(w["expect"].get("absent", [])), w["name"])
        self.assertTrue(table["overhead"] and table["event_counts"])

    def test_known_detectors_are_the_collectors(self):
        # The collector's detectors are the values of the Detector enum (report.proto), less the
        # two that are not detectors: "none" (no findings) and insufficient_data (no verdict).
        with open(os.path.join(REPO, "proto", "gpuspy", "v1", "report.proto")) as f:
            text = f.read()
        body = re.search(r"enum Detector \{(.*?)\}", text, re.S).group(1)
        found = set(re.findall(r"^\s*([a-z_0-9]+)\s*=\s*\d+;", body, re.M))
        self.assertTrue(found, "no Detector enum values found in report.proto")
        self.assertEqual(found - {"none", "insufficient_data"}, set(E.KNOWN_DETECTORS))

    def test_bad_tables_are_rejected_with_the_reason(self):
        good = {"workloads": [{"name": "a", "script": "healthy.py",
                               "expect": {"primary": ["gpu_bound"]}}]}
        E.parse_expected(good, os.path.join(HERE, "workloads"))
        cases = [
            ({"primary": ["gpu_bound_typo"]}, "unknown detectors"),
            ({"absent": "sync_stall"}, "must be a list"),
            ({"primaryy": ["gpu_bound"]}, "unknown expect keys"),
            ({}, "checks nothing"),
            ({"per_rank": {"x": {"present": ["straggler"]}}}, "rank numbers"),
            ({"per_rank": {"1": {"per_rank": {}}}}, "cannot nest"),
            ({"warmup": {"max": 3}}, "max_steps"),
        ]
        for expect, message in cases:
            doc = copy.deepcopy(good)
            doc["workloads"][0]["expect"] = expect
            with self.assertRaisesRegex(ValueError, message):
                E.parse_expected(doc)
        doc = copy.deepcopy(good)
        doc["workloads"].append(dict(doc["workloads"][0]))
        with self.assertRaisesRegex(ValueError, "duplicate"):
            E.parse_expected(doc)
        doc = copy.deepcopy(good)
        doc["workloads"][0]["script"] = "nope.py"
        with self.assertRaisesRegex(ValueError, "no such script"):
            E.parse_expected(doc, os.path.join(HERE, "workloads"))
        doc = copy.deepcopy(good)
        doc["workloads"][0]["twin_of"] = "zzz"
        with self.assertRaisesRegex(ValueError, "twin_of"):
            E.parse_expected(doc)
        doc = copy.deepcopy(good)
        doc["overhead"] = ["zzz"]
        with self.assertRaisesRegex(ValueError, "overhead"):
            E.parse_expected(doc)
        doc = copy.deepcopy(good)
        doc["counters"] = {"healthy": [{"class": "gemm_tc", "reading": "sm_active_pct", "min": 1}]}
        with self.assertRaisesRegex(ValueError, "counters"):
            E.parse_expected(doc)
        doc = copy.deepcopy(good)
        doc["workloads"][0].update(kind="torchrun")
        with self.assertRaisesRegex(ValueError, "nproc"):
            E.parse_expected(doc)


class Verdicts(unittest.TestCase):
    def test_rows_read_proto3_json_defaults(self):
        rows = V.step_rows(load("report_sync.json"))
        first = rows[0]
        self.assertEqual(first["number"], 0)          # "number" is left out for step 0
        self.assertFalse(first["steady"])             # so is steady_state=false
        self.assertEqual(first["primary"], "warmup")
        self.assertTrue(rows[-1]["steady"])
        self.assertGreater(rows[-1]["kernel_count"], 0)
        self.assertTrue(all(r["source"].startswith("nvtx:") for r in rows))

    def test_majority_counts_only_steady_steps(self):
        rows = rows_of("report_sync.json")
        self.assertEqual(V.majority_primary(rows)[0], "sync_stall")
        # Make every warm-up step claim another primary: the majority must not move.
        for r in rows:
            if not r["steady"]:
                r["primary"] = "gpu_idle"
        det, n, total = V.majority_primary(rows)
        self.assertEqual((det, n), ("sync_stall", total))
        self.assertEqual(total, sum(1 for r in rows if r["steady"]))

    def test_pathology_is_recognised_and_a_wrong_one_fails(self):
        status, failures, _, _ = V.evaluate({"primary": ["sync_stall"]}, load("report_sync.json"))
        self.assertEqual(status, "PASS", failures)
        status, failures, _, _ = V.evaluate({"primary": ["launch_storm"]},
                                            load("report_sync.json"))
        self.assertEqual(status, "FAIL")
        self.assertIn("steady primary is sync_stall", failures[0])

    def test_fixed_twin_must_not_be_flagged(self):
        status, failures, _, _ = V.evaluate({"absent": ["sync_stall"]},
                                            load("report_healthy.json"))
        self.assertEqual(status, "PASS", failures)
        status, failures, _, _ = V.evaluate({"absent": ["sync_stall"]}, load("report_sync.json"))
        self.assertEqual(status, "FAIL")
        self.assertIn("flagged with sync_stall", failures[0])

    def test_twin_tolerates_a_stray_finding_but_not_a_pattern(self):
        report = load("report_healthy.json")
        steady = [r for r in report["reports"] if r.get("steady_state")]
        steady[0]["findings"].append({"detector": "sync_stall", "lost_ns": "1"})
        status, failures, notes, _ = V.evaluate({"absent": ["sync_stall"]}, report)
        self.assertEqual(status, "PASS", failures)
        self.assertTrue(any("tolerated" in n for n in notes))
        for r in steady[:len(steady) // 2]:
            r["findings"].append({"detector": "sync_stall", "lost_ns": "1"})
        status, _, _, _ = V.evaluate({"absent": ["sync_stall"]}, report)
        self.assertEqual(status, "FAIL")

    def test_majority_needs_more_than_half(self):
        report = load("report_sync.json")
        steady = [r for r in report["reports"] if r.get("steady_state")]
        for r in steady[:(len(steady) + 1) // 2]:
            r["primary_bottleneck"] = "gpu_idle"
        status, _, _, _ = V.evaluate({"primary": ["sync_stall"]}, report)
        self.assertEqual(status, "FAIL")
        status, _, _, _ = V.evaluate({"primary": ["sync_stall", "gpu_idle"]}, report)
        self.assertEqual(status, "PASS")

    def test_steps_not_from_nvtx_are_not_the_workloads(self):
        report = load("report_sync.json")
        # Another process of the job (say, a compile worker that touched CUDA) with period steps.
        for r in copy.deepcopy(report["reports"]):
            r["step"]["process_id"] = "99"
            r["step"]["source"] = "period:32 kernels"
            r["steady_state"] = True
            r["primary_bottleneck"] = "gpu_idle"
            report["reports"].append(r)
        status, failures, notes, _ = V.evaluate({"primary": ["sync_stall"]}, report)
        self.assertEqual(status, "PASS", failures)
        self.assertFalse(any("processes" in n for n in notes))

    def test_too_few_steady_steps_fail(self):
        status, failures, _, _ = V.evaluate({"primary": ["sync_stall"], "min_steady_steps": 30},
                                            load("report_sync.json"))
        self.assertEqual(status, "FAIL")
        self.assertIn("steady steps", failures[0])
        status, failures, _, _ = V.evaluate({"primary": ["sync_stall"]}, {"reports": []})
        self.assertEqual(failures, ["no NVTX steps captured"])

    def test_warmup_expectation(self):
        report = load("report_sync.json")
        status, failures, notes, _ = V.evaluate({"warmup": {"max_steps": 3}}, report)
        self.assertEqual(status, "PASS", failures)
        self.assertIn("2 warm-up step(s)", notes)
        status, failures, _, _ = V.evaluate({"warmup": {"max_steps": 1}}, report)
        self.assertIn("2 leading non-steady steps", failures[0])
        first = next(r for r in report["reports"] if "number" not in r["step"])
        first["steady_state"] = True
        first["primary_bottleneck"] = "sync_stall"
        status, failures, _, _ = V.evaluate({"warmup": {"max_steps": 3}}, report)
        self.assertIn("step 0 is not a warm-up step", failures[0])

    def test_per_rank_straggler(self):
        expect = {"per_rank": {"1": {"present": ["straggler"]}, "0": {"absent": ["straggler"]},
                               "2": {"absent": ["straggler"]}}, "min_steady_steps": 5}
        report, jobs = load("report_strag.json"), load("jobs_strag.json")
        status, failures, _, groups = V.evaluate(expect, report, jobs, "c_strag")
        self.assertEqual(status, "PASS", failures)
        self.assertEqual([label for label, _ in groups], ["rank 0", "rank 1", "rank 2"])
        # The straggler finding on the wrong rank.
        ranks = V.ranks_by_process(jobs, "c_strag")
        slow = next(pid for pid, r in ranks.items() if r == 1)
        fast = next(pid for pid, r in ranks.items() if r == 0)
        for r in report["reports"]:
            pid = int(r["step"]["process_id"])
            if pid in (slow, fast):
                r["step"]["process_id"] = str(fast if pid == slow else slow)
        status, failures, _, _ = V.evaluate(expect, report, jobs, "c_strag")
        self.assertEqual(status, "FAIL")
        self.assertTrue(any(f.startswith("rank 0: flagged with straggler") for f in failures))
        self.assertTrue(any(f.startswith("rank 1: straggler found in 0%") for f in failures))
        # No process of the rank at all.
        status, failures, _, _ = V.evaluate({"per_rank": {"5": {"absent": ["straggler"]}},
                                             "min_steady_steps": 5},
                                            report, jobs, "c_strag")
        self.assertEqual(failures, ["rank 5: no NVTX steps captured"])

    def test_present_any_finds_a_single_step(self):
        report = load("report_healthy.json")
        status, _, _, _ = V.evaluate({"present_any": ["memory_growth"]}, report)
        self.assertEqual(status, "FAIL")
        last = [r for r in report["reports"] if r.get("steady_state")][-1]
        last["findings"].append({"detector": "memory_growth"})
        status, failures, _, _ = V.evaluate({"present_any": ["memory_growth"]}, report)
        self.assertEqual(status, "PASS", failures)

    def test_exact_counts(self):
        report = load("report_healthy.json")
        rows = rows_of("report_healthy.json")
        steady = [r for r in rows if r["steady"]]
        kernels, memcpys = steady[0]["kernel_count"], steady[0]["memcpy_count"]
        self.assertTrue(all(r["kernel_count"] == kernels for r in steady))
        program = {"expect_per_step": {"kernels": kernels, "memcpys": memcpys}}
        status, failures, notes, _ = V.evaluate({"exact_counts": True}, report,
                                                programs=[program])
        self.assertEqual(status, "PASS", failures)
        program["expect_per_step"]["kernels"] += 1
        status, failures, _, _ = V.evaluate({"exact_counts": True}, report, programs=[program])
        self.assertIn(f"{len(steady)}/{len(steady)} steady steps differ", failures[0])
        status, failures, _, _ = V.evaluate({"exact_counts": True}, report, programs=[])
        self.assertIn("no expect_per_step", failures[0])

    def test_results_page(self):
        report = load("report_sync.json")
        _, failures, notes, groups = V.evaluate({"primary": ["sync_stall"]}, report)
        state = {
            "date": "2030-01-01", "command": "run.sh", "elapsed_s": 12,
            "system": {"gpu": "1 x NVIDIA H100 80GB HBM3 (81559 MiB)", "driver": "580.159.04"},
            "verdict_line": "verdicts: 1 passed, 0 failed, 0 skipped",
            "verdicts": [{"name": "sync_stall", "result": "PASS", "expected_text": "sync_stall",
                          "failures": failures, "notes": notes,
                          "groups": [(label, V.group_summary(g)) for label, g in groups]},
                         {"name": "triton", "result": "SKIPPED", "notes": ["no | triton"]}],
            "overhead": [{"name": "healthy", "baseline_ms": 10.0, "dormant_ms": 10.01,
                          "capturing_ms": 10.3, "counters_ms": 10.5},
                         {"name": "x", "error": "dormant run failed"}],
            "counters": [{"name": "healthy", "result": "FAIL",
                          "bounds": [{"class": "gemm_tc", "reading": "tensor_active_pct", "min": 60}],
                          "readings": {"gemm_tc": {"tensor_active_pct": 41.2,
                                                   "dram_throughput_pct": 20.0, "steps": 25}}}],
            "counts": [{"name": "launch_storm", "steps": "10-19",
                        "rows": [("kernels", 30000, 30000, 0.0, True),
                                 ("memcpys", 10, 9, -0.1, False)]}],
        }
        md = P.render_markdown(state)
        for needle in ("# GPU validation suite — 2030-01-01", "NVIDIA H100", "580.159.04",
                       "| sync_stall |  | sync_stall | sync_stall (", "**PASS**", "no \\| triton",
                       "+3.0%", "+0.1%", "+5.0%", "dormant run failed",
                       "| healthy | FAIL | gemm_tc: tensor 41%, DRAM 20% | gemm_tc tensor_active_pct >= 60 |", "| launch_storm | 10-19 | memcpys | 10 | 9 | -10.00% | **no** |"):
            self.assertIn(needle, md)
        json.dumps(state)  # what suite.py writes beside it


def to_kineto(steps_json, events_json, drop_kernels=0):
    """A torch.profiler-shaped Chrome trace of the same events (times in us, like Kineto)."""
    trace = []
    for s in steps_json["steps"]:
        start, end = int(s["start_ns"]), int(s["end_ns"])
        trace.append({"ph": "X", "cat": "user_annotation",
                      "name": f"GpuSuiteStep#{int(s.get('number', 0))}",
                      "ts": start / 1e3, "dur": (end - start) / 1e3})
        trace.append({"ph": "X", "cat": "gpu_user_annotation",  # Kineto's GPU-side copy
                      "name": f"GpuSuiteStep#{int(s.get('number', 0))}",
                      "ts": start / 1e3, "dur": (end - start) / 1e3})
    cat = {"kernel": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset"}
    for p in events_json["processes"]:
        for e in p["events"]:
            (kind, body), = e.items()
            if kind == "api":
                trace.append({"ph": "X", "cat": "cuda_runtime", "name": body["name"],
                              "ts": int(body["start_ns"]) / 1e3,
                              "args": {"correlation": int(body["correlation_id"])}})
            elif kind in cat:
                if kind == "kernel" and drop_kernels:
                    drop_kernels -= 1
                    continue
                trace.append({"ph": "X", "cat": cat[kind], "name": body.get("name", kind),
                              "ts": int(body["start_ns"]) / 1e3,
                              "args": {"correlation": int(body.get("correlation_id", 0))}})
    return {"traceEvents": trace}


def gpuspy_steps(steps_json):
    return [{"number": int(s.get("number", 0)), "start_ns": int(s["start_ns"]),
             "end_ns": int(s["end_ns"])} for s in steps_json["steps"]]


class EventCounts(unittest.TestCase):
    def test_same_events_count_the_same_on_both_sides(self):
        steps, events = load("steps_copy.json"), load("events_copy.json")
        measured = C.count_gpuspy_events(gpuspy_steps(steps), events, 1, 3)
        reference = C.count_kineto_events(to_kineto(steps, events), 1, 3)
        self.assertEqual(sorted(measured), [1, 2, 3])
        self.assertGreater(measured[2]["kernels"], 10)
        self.assertGreater(measured[2]["memcpys"], 0)
        rows, common = C.compare_counts(reference, measured)
        self.assertEqual(common, [1, 2, 3])
        self.assertTrue(rows and all(ok for *_, ok in rows), rows)
        self.assertEqual({k for k, *_ in rows}, {"kernels", "memcpys", "memsets"})

    def test_missing_events_show_as_a_difference(self):
        steps, events = load("steps_copy.json"), load("events_copy.json")
        measured = C.count_gpuspy_events(gpuspy_steps(steps), events, 0, 3)
        reference = C.count_kineto_events(to_kineto(steps, events, drop_kernels=40), 0, 3)
        rows, _ = C.compare_counts(reference, measured)
        kernels = next(r for r in rows if r[0] == "kernels")
        self.assertGreater(kernels[3], C.COUNT_TOLERANCE)
        self.assertFalse(kernels[4])

    def test_gpu_work_counts_for_the_step_that_launched_it(self):
        steps = [{"number": 0, "start_ns": 0, "end_ns": 100}, {"number": 1, "start_ns": 100,
                                                               "end_ns": 200}]
        events = {"processes": [{"events": [
            {"api": {"start_ns": "90", "correlation_id": "7", "name": "cudaLaunchKernel"}},
            {"kernel": {"start_ns": "150", "correlation_id": "7"}},     # ran in step 1's window
            {"memcpy": {"start_ns": "120", "correlation_id": "8"}},     # no launch seen: own start
            {"kernel": {"start_ns": "500", "correlation_id": "9"}},     # outside every step
        ]}]}
        counts = C.count_gpuspy_events(steps, events, 0, 1)
        self.assertEqual(counts[0]["kernels"], 1)
        self.assertEqual(counts[1]["kernels"], 0)
        self.assertEqual(counts[1]["memcpys"], 1)


class Scripts(unittest.TestCase):
    def test_every_python_file_compiles(self):
        files = glob.glob(os.path.join(HERE, "workloads", "*.py")) + \
            glob.glob(os.path.join(HERE, "*.py")) + glob.glob(os.path.join(DATA, "*.py"))
        self.assertGreaterEqual(len(files), 12)
        with tempfile.TemporaryDirectory() as tmp:
            for i, path in enumerate(files):
                py_compile.compile(path, cfile=os.path.join(tmp, f"{i}.pyc"), doraise=True)

    def test_workloads_emit_profiler_steps_and_the_result_line(self):
        with open(os.path.join(HERE, "workloads", "common.py")) as f:
            common = f.read()
        self.assertIn('range_push(f"ProfilerStep#{i}")', common)
        self.assertIn("GPUSUITE_RESULT ", common)
        for path in glob.glob(os.path.join(HERE, "workloads", "*.py")):
            if path.endswith("common.py"):
                continue
            with open(path) as f:
                text = f.read()
            self.assertIn("run_steps(", text, path)
            self.assertIn("parse_args(", text, path)
        with open(os.path.join(HERE, "cuda", "plain_cuda.cu")) as f:
            cu = f.read()
        self.assertIn('"ProfilerStep#"', cu)
        self.assertIn("GPUSUITE_RESULT", cu)

    def test_run_sh_says_why_it_skips(self):
        with tempfile.TemporaryDirectory() as tmp:
            def tool(name, body):
                path = os.path.join(tmp, name)
                with open(path, "w") as f:
                    f.write("#!/bin/sh\n" + body + "\n")
                os.chmod(path, 0o755)
                return path

            def run(python, smi_body):
                tool("nvidia-smi", smi_body)
                env = dict(os.environ, PATH=tmp + ":" + os.environ["PATH"], PYTHON=python)
                return subprocess.run([os.path.join(HERE, "run.sh")], capture_output=True,
                                      text=True, timeout=60, env=env)

            no_cuda = tool("py-no-cuda", "exit 3")
            no_torch = tool("py-no-torch", "echo 'ModuleNotFoundError: No module named torch' >&2; exit 1")
            has_cuda = tool("py-cuda", 'echo "$@"')
            gpu = "echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'"
            cases = [
                (no_cuda, "echo 'No devices were found'; exit 6", "nvidia-smi -L failed"),
                (no_cuda, "echo 'nothing'", "nvidia-smi lists no GPU"),
                (no_cuda, gpu, "PyTorch cannot use the GPU (torch.cuda.is_available() is False)"),
                (no_torch, gpu, "PyTorch is not importable by " + no_torch +
                 " (ModuleNotFoundError: No module named torch)"),
            ]
            for python, smi, reason in cases:
                r = run(python, smi)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn("GPU suite skipped: " + reason, r.stdout)
            # With a GPU it hands over to suite.py, --bin-dir and the other options included.
            env = dict(os.environ, PATH=tmp + ":" + os.environ["PATH"], PYTHON=has_cuda)
            tool("nvidia-smi", gpu)
            r = subprocess.run([os.path.join(HERE, "run.sh"), "--bin-dir", "/x", "--only",
                                "healthy"], capture_output=True, text=True, timeout=60, env=env)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("GPU suite: GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0); binaries from /x",
                          r.stdout)
            self.assertIn(os.path.join(HERE, "suite.py") + " --bin-dir /x --only healthy",
                          r.stdout)

    def test_suite_without_binaries_is_a_setup_failure(self):
        r = subprocess.run([sys.executable, os.path.join(HERE, "suite.py"), "--bin-dir",
                            "/nonexistent"], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("lacks /nonexistent/collector/server/gpuspyd", r.stderr)

    def test_every_workload_variant_runs_its_steps_on_a_stand_in_torch(self):
        """The scripts' own logic on testdata/fake_torch (no PyTorch, no GPU here): each variant
        the expected table runs parses its arguments, runs its steps and prints its result."""
        table = E.load_expected(os.path.join(HERE, "expected.json"))
        env = dict(os.environ, PYTHONPATH=os.path.join(DATA, "fake_torch"),
                   RANK="1", LOCAL_RANK="1", WORLD_SIZE="2")
        runs = [(w["script"], w["args"]) for w in table["workloads"] if "script" in w]
        runs.append(("launch_storm.py", ["--torch-profiler", os.devnull, "--profile-steps", "1-2"]))
        for script, args in runs:
            r = subprocess.run([sys.executable, os.path.join(HERE, "workloads", script),
                                "--steps", "3"] + args, capture_output=True, text=True,
                               timeout=120, env=env)
            what = f"{script} {' '.join(args)}: {r.stdout}{r.stderr}"
            if script == "triton_kernel.py" and r.returncode == 77:
                self.assertIn("SKIP: triton is not importable", r.stdout)
                continue
            self.assertEqual(r.returncode, 0, what)
            lines = [l for l in r.stdout.splitlines() if l.startswith("GPUSUITE_RESULT ")]
            self.assertEqual(len(lines), 1, what)
            result = json.loads(lines[0].split(" ", 1)[1])
            self.assertEqual(len(result["step_ms"]), 3, what)
            self.assertEqual(result["variant"], args[1] if args[:1] == ["--variant"] else "bad")
        r = subprocess.run([sys.executable, os.path.join(HERE, "workloads", "healthy.py"),
                            "--torch-profiler", os.devnull, "--profile-steps", "0-1"],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("need 1 <= A <= B < --steps", r.stderr)

    @unittest.skipUnless(os.path.isfile(NVCC), "nvcc is not installed here")
    def test_plain_cuda_compiles(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "plain_cuda")
            r = subprocess.run([NVCC, "-O2", "-std=c++17", "-gencode", "arch=compute_90,code=sm_90",
                                "-o", out, os.path.join(HERE, "cuda", "plain_cuda.cu"), "-ldl"],
                               capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(os.access(out, os.X_OK))

    @unittest.skipIf(has_gpu(), "this machine has a GPU: run.sh would run the real suite")
    def test_run_sh_skips_without_a_gpu(self):
        r = subprocess.run([os.path.join(HERE, "run.sh")], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"^GPU suite skipped: \S")
        # Whatever the arguments.
        r = subprocess.run([os.path.join(HERE, "run.sh"), "--bin-dir", "/nonexistent",
                            "--only", "healthy"], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0)
        self.assertIn("GPU suite skipped", r.stdout)


BUILD = os.environ.get("GPUSPY_BUILD_DIR", "")
REPLAY = os.environ.get("REPLAY_BIN", "")


def build_paths():
    return {"gpuspyd": os.path.join(BUILD, "collector", "server", "gpuspyd"),
            "gpuspy": os.path.join(BUILD, "viewer", "cli", "gpuspy"),
            "shim": os.path.join(BUILD, "lib", "libgpuspy.so")}


def live_ready():
    return bool(BUILD and REPLAY and os.path.isfile(REPLAY) and
                all(os.path.isfile(p) for p in build_paths().values()))


def sanitized(path):
    """GCC links the sanitizer runtime (libasan/libtsan.so); clang links it into executables only,
    leaving a shared library's __asan_*/__tsan_* calls undefined until it is loaded."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    if "libasan" in out or "libtsan" in out:
        return True
    syms = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True,
                          text=True).stdout
    return "__asan_" in syms or "__tsan_" in syms


@unittest.skipUnless(live_ready(), "needs GPUSPY_BUILD_DIR with a built gpuspyd/gpuspy and "
                                   "REPLAY_BIN (set by ctest)")
class Live(unittest.TestCase):
    """Against the real gpuspyd of this build: the canned JSON's shape still holds, and suite.py
    runs end to end."""

    def test_live_reports_judge_like_the_canned_ones(self):
        paths = build_paths()
        with tempfile.TemporaryDirectory() as tmp:
            port_file = os.path.join(tmp, "port")
            daemon = subprocess.Popen([paths["gpuspyd"], "--listen", "127.0.0.1:0", "--unix", "",
                                       "--http", "", "--data-dir", os.path.join(tmp, "store"),
                                       "--port-file", port_file, "--log-level", "warn"])
            try:
                port = ""
                for _ in range(600):
                    if os.path.exists(port_file):
                        with open(port_file) as f:
                            port = f.read().strip()
                    if port:
                        break
                    time.sleep(0.05)
                addr = "127.0.0.1:" + port
                for job, scenario, expect in (
                        ("sync", "sync_stall", {"primary": ["sync_stall"]}),
                        ("launch", "launch_storm", {"primary": ["launch_storm"],
                                                    "absent": ["sync_stall"]}),
                        ("churn", "alloc_churn", {"primary": ["alloc_churn"]}),
                        ("healthy", "healthy", {"primary": ["gpu_bound"],
                                                "absent": ["sync_stall", "alloc_churn"],
                                                "warmup": {"max_steps": 3}})):
                    subprocess.run([REPLAY, "--collector", addr, "--job", job, "--scenario",
                                    scenario, "--steps", "14"], check=True, capture_output=True)
                    r = subprocess.run([paths["gpuspy"], "--collector", addr, "--json", "report",
                                        "--job", job, "--all"], capture_output=True, text=True,
                                       check=True)
                    status, failures, _, _ = V.evaluate(expect, json.loads(r.stdout))
                    self.assertEqual(status, "PASS", f"{job}: {failures}")
            finally:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(timeout=30)

    def test_suite_end_to_end_with_stand_in_workloads(self):
        paths = build_paths()
        if sanitized(paths["shim"]):
            self.skipTest("a sanitizer build's libgpuspy.so cannot be preloaded into python3")
        with tempfile.TemporaryDirectory() as tmp:
            pack = os.path.join(tmp, "pack")
            r = subprocess.run([os.path.join(HERE, "pack.sh"), BUILD, pack], capture_output=True,
                               text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("MiB", r.stdout)
            for sub in ("bin/gpuspyd", "bin/gpuspy", "lib/libgpuspy.so", "lib/libgpuspy_inject.so",
                        "lib/libgpuspy_core.so", "MANIFEST"):
                self.assertTrue(os.path.isfile(os.path.join(pack, sub)), sub)
            self.assertTrue(glob.glob(os.path.join(pack, "deps", "libgrpc++.so*")))
            self.assertFalse(glob.glob(os.path.join(pack, "deps", "libc.so*")))
            self.assertFalse(glob.glob(os.path.join(pack, "deps", "libstdc++.so*")))

            results = os.path.join(tmp, "results")
            env = dict(os.environ, REPLAY_BIN=REPLAY,
                       FAKE_WORKLOAD=os.path.join(DATA, "fake_workload.py"))
            r = subprocess.run([sys.executable, os.path.join(HERE, "suite.py"), "--bin-dir", pack,
                                "--expected", os.path.join(DATA, "replay_expected.json"),
                                "--results-dir", results, "--phases", "verdicts,overhead",
                                "--steps", "12"], capture_output=True, text=True, timeout=600,
                               env=env)
            log = r.stdout + r.stderr
            # One workload is a "fixed twin" that still has the pathology: the suite must say so.
            self.assertEqual(r.returncode, 1, log)
            md_files = glob.glob(os.path.join(results, "*.md"))
            self.assertEqual(len(md_files), 1, log)
            with open(md_files[0]) as f:
                md = f.read()
            self.assertIn("verdicts: 3 passed, 1 failed, 0 skipped (advisory: straggler PASS)", md)
            self.assertRegex(md, r"\| healthy \|  \| gpu_bound, not sync_stall \| gpu_bound \(10/10\)"
                                 r" \| 10/12 \|.*\*\*PASS\*\*")
            self.assertRegex(md, r"\| sync_stall_fixed_but_not \| sync_stall \|.*\*\*FAIL\*\* \| "
                                 r"flagged with sync_stall")
            self.assertIn("rank 1: straggler (10/10)", md)
            # The fourth run of each, with GPUSPY_COUNTERS=1 (the stand-in replays no counters).
            self.assertRegex(md, r"\| healthy \| 10\.000 ms \| 10\.000 ms \| 10\.200 ms \| 10\.200 ms "
                                 r"\| \+0\.0% \| \+2\.0% \| \+2\.0% \|")
            with open(glob.glob(os.path.join(results, "*.json"))[0]) as f:
                state = json.load(f)
            self.assertEqual([v["result"] for v in state["verdicts"]],
                             ["PASS", "PASS", "FAIL", "PASS", "PASS"])
            self.assertTrue(glob.glob(os.path.join(results, "*-logs.tar.gz")))

            # --only picks workloads; a clean selection exits 0.
            r = subprocess.run([sys.executable, os.path.join(HERE, "suite.py"), "--bin-dir", pack,
                                "--expected", os.path.join(DATA, "replay_expected.json"),
                                "--results-dir", results, "--phases", "verdicts", "--only",
                                "healthy,sync_stall", "--steps", "12"],
                               capture_output=True, text=True, timeout=600, env=env)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

            # A setup failure still leaves a results page saying why.
            r = subprocess.run([sys.executable, os.path.join(HERE, "suite.py"), "--bin-dir", pack,
                                "--results-dir", results, "--only", "no_such_workload"],
                               capture_output=True, text=True, timeout=300, env=env)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            with open(md_files[0]) as f:
                self.assertIn("SETUP FAILED: --only names unknown workloads", f.read())


if __name__ == "__main__":
    unittest.main(verbosity=2)
