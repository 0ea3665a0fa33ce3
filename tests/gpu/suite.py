#!/usr/bin/env python3
"""Runs the GPU validation suite (tests/gpu/run.sh calls this once it has found a GPU).

Starts a gpuspyd on a temporary directory, runs each workload of expected.json injected with
libgpuspy.so, asks `gpuspy --json report --job <w> --all` for its steps and judges the
steady-state verdicts (verdicts.py); then compares GPU event counts with torch.profiler on the
same steps and measures step-time overhead (not injected / dormant / capturing). Writes
<results-dir>/<date>.md and .json and a tarball of the logs; exits 1 on any wrong verdict, error
or count mismatch, 2 when it cannot set up at all.

usage: suite.py --bin-dir DIR [--results-dir DIR] [--phases verdicts,counts,overhead]
                [--only NAME,...] [--steps N] [--deadline-s S] [--expected FILE]
"""
import argparse
import datetime
import json
import statistics
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import event_counts as C  # noqa: E402
import expected_table as E  # noqa: E402
import results_page as P  # noqa: E402
import verdicts as V  # noqa: E402
from machine import (SYSTEM_LIBS, Binaries, SetupError, find_cupti, run_text,  # noqa: E402
                     system_info, system_sonames)

EXIT_SKIP = 77  # workloads/common.py


def log(msg):
    print(f"[gpu-suite {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Suite:
    def __init__(self, args):
        self.args = args
        self.start = time.monotonic()
        self.expected = E.load_expected(args.expected)
        self.bins = Binaries(args.bin_dir)
        self.tmp = tempfile.mkdtemp(prefix="gpuspy-gpu-suite.")
        self.logs = os.path.join(self.tmp, "logs")
        os.makedirs(self.logs)
        self.daemon = None
        self.address = None
        self.cupti_fallback = None
        self.force_cupti = False
        self.date = datetime.date.today().isoformat()
        os.makedirs(args.results_dir, exist_ok=True)
        self.md_path = os.path.join(args.results_dir, f"{self.date}.md")
        self.json_path = os.path.join(args.results_dir, f"{self.date}.json")
        self.logs_tar = os.path.join(args.results_dir, f"{self.date}-logs.tar.gz")
        self.state = {"date": self.date, "command": " ".join(shlex.quote(a) for a in sys.argv),
                      "verdicts": [], "overhead": [], "counts": [], "setup_notes": [],
                      "logs": os.path.relpath(self.logs_tar, REPO)
                      if self.logs_tar.startswith(REPO) else self.logs_tar}
        self.programs = {}   # job -> GPUSUITE_RESULT dicts
        self.failed = False

    # --- environment ----------------------------------------------------------------------------

    def setup_libraries(self):
        """Our binaries get every packed library; injected workloads only those the system lacks,
        so the application keeps its own libz/libssl/... and only the core finds gRPC & co."""
        self.daemon_env = dict(os.environ)
        self.workload_libs = None
        if self.bins.deps and os.path.isdir(self.bins.deps):
            self.daemon_env["LD_LIBRARY_PATH"] = ":".join(
                p for p in (self.bins.deps, os.environ.get("LD_LIBRARY_PATH")) if p)
            have = system_sonames()
            missing_dir = os.path.join(self.tmp, "missing-libs")
            os.makedirs(missing_dir)
            linked = []
            for name in sorted(os.listdir(self.bins.deps)):
                if name not in have and not SYSTEM_LIBS.match(name):
                    os.symlink(os.path.join(self.bins.deps, name), os.path.join(missing_dir, name))
                    linked.append(name)
            self.workload_libs = missing_dir
            log(f"{len(linked)} packed libraries not on this system, given to workloads: "
                f"{' '.join(linked) or '-'}")
        env = self.workload_env("preflight")
        rc, out, err = run_text(["ldd", os.path.join(self.bins.lib, "libgpuspy_core.so")], env=env)
        unresolved = [line.strip() for line in out.splitlines() if "not found" in line]
        if rc != 0 or unresolved:
            raise SetupError("libgpuspy_core.so has unresolved libraries in the "
                             f"workloads' environment: {unresolved or err.strip()} (run "
                             "tests/gpu/pack.sh on the build machine and pass its output)")
        rc, out, err = run_text(["ldd", self.bins.gpuspyd], env=self.daemon_env)
        unresolved = [line.strip() for line in out.splitlines() if "not found" in line]
        if rc != 0 or unresolved:
            raise SetupError(f"gpuspyd has unresolved libraries: {unresolved or err}")
        self.cupti_fallback = find_cupti()
        self.state["setup_notes"].append(
            f"libcupti on this machine: {self.cupti_fallback or 'none found by the suite'} "
            "(the injection stub looks on its own; the suite passes GPUSPY_CUPTI_PATH only if a "
            "run captured nothing without it)")

    def workload_env(self, job, mode="always", inject=True, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPUSPY_") and k not in ("CUDA_INJECTION64_PATH",
                                                             "NVTX_INJECTION64_PATH")}
        env["PYTHONUNBUFFERED"] = "1"
        if inject:
            env["LD_PRELOAD"] = " ".join(p for p in (self.bins.shim, os.environ.get("LD_PRELOAD"))
                                         if p)
            env["GPUSPY_COLLECTOR"] = self.address or "127.0.0.1:1"
            env["GPUSPY_JOB"] = job
            env["GPUSPY_MODE"] = mode
            env["GPUSPY_LOG"] = "info"
            env["GPUSPY_SPILL_DIR"] = os.path.join(self.tmp, "spill")
            if self.workload_libs:
                env["LD_LIBRARY_PATH"] = ":".join(
                    p for p in (self.workload_libs, os.environ.get("LD_LIBRARY_PATH")) if p)
            if self.force_cupti and self.cupti_fallback:
                env["GPUSPY_CUPTI_PATH"] = self.cupti_fallback
        else:
            kept = [p for p in env.get("LD_PRELOAD", "").replace(":", " ").split()
                    if "libgpuspy" not in p]
            if kept:
                env["LD_PRELOAD"] = " ".join(kept)
            else:
                env.pop("LD_PRELOAD", None)
        env.update(extra or {})
        return env

    def start_daemon(self):
        port_file = os.path.join(self.tmp, "port")
        self.daemon_log = open(os.path.join(self.logs, "gpuspyd.log"), "w")
        self.daemon = subprocess.Popen(
            [self.bins.gpuspyd, "--listen", "127.0.0.1:0", "--unix", "", "--http", "",
             "--data-dir", os.path.join(self.tmp, "store"), "--port-file", port_file,
             "--log-level", "info"],
            stdout=self.daemon_log, stderr=subprocess.STDOUT, env=self.daemon_env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                break
            port = ""
            if os.path.exists(port_file):
                with open(port_file) as f:
                    port = f.read().strip()
            if port:
                self.address = "127.0.0.1:" + port
                log(f"gpuspyd listening on {self.address}")
                return
            time.sleep(0.05)
        if self.daemon.poll() is None:
            self.daemon.kill()
            self.daemon.wait()
        self.daemon_log.flush()
        with open(os.path.join(self.logs, "gpuspyd.log")) as f:
            raise SetupError("gpuspyd did not start: " + f.read()[-2000:])

    def stop_daemon(self):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
        if self.daemon:
            self.daemon_log.close()

    def build_plain_cuda(self):
        out = os.path.join(self.tmp, "plain_cuda")
        nvcc = self.nvcc
        if not nvcc:
            return None, "nvcc not found"
        cmd = [nvcc, "-O2", "-std=c++17", "-gencode", "arch=compute_90,code=sm_90",
               "-gencode", "arch=compute_80,code=[sm_80,compute_80]", "-o", out,
               os.path.join(HERE, "cuda", "plain_cuda.cu"), "-ldl"]
        rc, stdout, stderr = run_text(cmd, timeout=300)
        with open(os.path.join(self.logs, "nvcc.log"), "w") as f:
            f.write(" ".join(cmd) + "\n" + stdout + stderr)
        if rc != 0:
            return None, f"nvcc failed ({stderr.strip()[-300:]})"
        return out, None

    # --- running things -------------------------------------------------------------------------

    def command_for(self, w, extra_args=()):
        steps = ["--steps", str(self.args.steps)]
        if w["kind"] == "python":
            return [sys.executable, os.path.join(HERE, "workloads", w["script"])] + steps + \
                w["args"] + list(extra_args)
        if w["kind"] == "torchrun":
            return [sys.executable, "-m", "torch.distributed.run", "--standalone",
                    "--nproc-per-node", str(w["nproc"]),
                    os.path.join(HERE, "workloads", w["script"])] + steps + w["args"] + \
                list(extra_args)
        if w["kind"] == "command":  # any program; "{steps}" and $VARS expand (tests use this)
            return [os.path.expandvars(a.replace("{steps}", str(self.args.steps)))
                    for a in w["argv"]] + w["args"] + list(extra_args)
        if w["binary"] == "plain_cuda":
            return [self.plain_cuda] + steps + w["args"]
        raise ValueError(w["binary"])

    def run_process(self, cmd, env, timeout, log_name):
        """Runs a workload in its own process group; returns (rc, GPUSUITE_RESULT dicts, seconds);
        rc None on timeout."""
        out_path = os.path.join(self.logs, log_name + ".out")
        err_path = os.path.join(self.logs, log_name + ".err")
        t0 = time.monotonic()
        with open(out_path, "w") as out, open(err_path, "w") as err:
            out.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
            out.flush()
            p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=HERE,
                                 start_new_session=True)
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                rc = None
        results = []
        with open(out_path) as f:
            for line in f:
                if line.startswith("GPUSUITE_RESULT "):
                    try:
                        results.append(json.loads(line[len("GPUSUITE_RESULT "):]))
                    except ValueError:
                        pass
        return rc, results, time.monotonic() - t0

    def gpuspy(self, *argv, timeout=120):
        cmd = [self.bins.gpuspy, "--collector", self.address, "--timeout", str(timeout), "--json"]
        rc, out, err = run_text(cmd + list(argv), timeout=timeout + 30, env=self.daemon_env)
        if rc != 0:
            return None, err.strip() or f"exit {rc}"
        try:
            return json.loads(out), None
        except ValueError as e:
            return None, f"bad JSON from gpuspy {' '.join(argv)}: {e}"

    def wait_for_steps(self, job, want):
        """Steps of a finished run: the producer's last batches are acknowledged before it exits,
        so this is quick; it polls a little in case a flush raced the exit."""
        last, stable = -1, 0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            data, err = self.gpuspy("steps", "--job", job, timeout=30)
            n = 0 if data is None else sum(1 for s in data.get("steps", [])
                                           if s.get("source", "").startswith("nvtx:"))
            if n >= want:
                return n
            stable = stable + 1 if n == last else 0
            if stable >= 4:
                return n
            last = n
            time.sleep(0.5)
        return max(last, 0)

    def events_of(self, job):
        """Events gpuspyd stored for a job (0 for an unknown job)."""
        data, _ = self.gpuspy("jobs", "--job", job, timeout=30)
        if data is None:
            return 0
        return sum(V._int(p.get("event_count")) for j in data.get("jobs", [])
                   if j.get("job_id") == job for p in j.get("processes", []))

    def out_of_time(self):
        return time.monotonic() - self.start > self.args.deadline_s

    # --- phases ---------------------------------------------------------------------------------

    def run_injected(self, w, job, mode="always"):
        env = self.workload_env(job, mode=mode, extra=w.get("env"))
        rc, results, secs = self.run_process(self.command_for(w), env, w["timeout_s"], job)
        return rc, results, secs

    def verdict(self, w):
        name = w["name"]
        row = {"name": name, "twin_of": w.get("twin_of", ""), "advisory": w["advisory"],
               "expected_text": E.expected_text(w["expect"]), "failures": [], "notes": []}
        self.state["verdicts"].append(row)
        if self.out_of_time():
            row["result"] = "SKIPPED"
            row["notes"].append("out of the suite's time budget (--deadline-s)")
            self.failed = True
            return
        if w["kind"] == "binary" and not self.plain_cuda:
            row["result"] = "SKIPPED"
            row["notes"].append(self.plain_cuda_error)
            return
        log(f"{name}: running injected")
        rc, results, secs = self.run_injected(w, name)
        if rc == EXIT_SKIP:
            row["result"] = "SKIPPED"
            row["notes"].append(self.tail(name + ".out", 1) or "the workload skipped itself")
            return
        nproc = w.get("nproc", 1)
        n = self.wait_for_steps(name, self.args.steps * nproc) if rc is not None else 0
        if rc == 0 and n == 0 and self.events_of(name) > 0:
            row["notes"].append("events arrived but no ProfilerStep NVTX ranges: NVTX capture "
                                "(NVTX_INJECTION64_PATH -> CUPTI) did not work")
        elif rc == 0 and n == 0 and self.cupti_fallback and not self.force_cupti:
            # Nothing arrived: the stub found no CUPTI on its own (or the core did not load). Say
            # so, and go on with the path the suite found, so the rest still means something.
            note = (f"{name}: nothing captured with the stub's own CUPTI lookup; rerunning with "
                    f"GPUSPY_CUPTI_PATH={self.cupti_fallback} for this and later runs "
                    f"(stderr: {self.tail(name + '.err', 3)})")
            log(note)
            self.state["setup_notes"].append(note)
            self.force_cupti = True
            name_retry = name + ".cupti"
            rc, results, secs = self.run_injected(w, name_retry)
            n = self.wait_for_steps(name_retry, self.args.steps * nproc) if rc is not None else 0
            name = name_retry
        row["job"] = name
        row["seconds"] = round(secs, 1)
        self.programs[name] = results
        if rc is None:
            row["result"] = "ERROR"
            row["failures"].append(f"timed out after {w['timeout_s']} s "
                                   f"(last stderr: {self.tail(name + '.err', 2)})")
        elif rc != 0:
            row["result"] = "ERROR"
            row["failures"].append(f"exit {rc}: {self.tail(name + '.err', 3)}")
        if rc is None or rc != 0:
            if not w["advisory"]:
                self.failed = True
            return
        report, err = self.gpuspy("report", "--job", name, "--all", timeout=120)
        jobs, _ = self.gpuspy("jobs", "--job", name, timeout=30)
        if report is None:
            row["result"] = "ERROR"
            row["failures"].append(f"gpuspy report: {err}")
            if not w["advisory"]:
                self.failed = True
            return
        with open(os.path.join(self.logs, name + ".report.json"), "w") as f:
            json.dump(report, f)
        if jobs is not None:
            with open(os.path.join(self.logs, name + ".jobs.json"), "w") as f:
                json.dump(jobs, f)
        text = subprocess.run([self.bins.gpuspy, "--collector", self.address, "report", "--job",
                               name, "--last", "3"], capture_output=True, text=True,
                              env=self.daemon_env, timeout=150)
        with open(os.path.join(self.logs, name + ".report.txt"), "w") as f:
            f.write(text.stdout + text.stderr)
        result, failures, notes, groups = V.evaluate(w["expect"], report, jobs, name, results)
        row["result"] = result
        row["failures"] += failures
        row["notes"] += notes
        row["groups"] = [(label, V.group_summary(g)) for label, g in groups]
        if result != "PASS" and not w["advisory"]:
            self.failed = True
        log(f"{name}: {result} {'; '.join(failures)}")

    def counts(self, w):
        name = w["name"]
        entry = {"name": name}
        self.state["counts"].append(entry)
        first, last = self.args.count_steps
        if self.out_of_time():
            entry["error"] = "out of the suite's time budget"
            self.failed = True
            return
        trace = os.path.join(self.tmp, name + ".torch-trace.json")
        log(f"{name}: running under torch.profiler (steps {first}-{last})")
        rc, _, _ = self.run_process(
            self.command_for(w, ["--torch-profiler", trace, "--profile-steps", f"{first}-{last}"]),
            self.workload_env(name, inject=False, extra=w.get("env")), w["timeout_s"],
            name + ".torch-profiler")
        if rc != 0 or not os.path.isfile(trace):
            entry["error"] = f"torch.profiler run failed (exit {rc}): " + \
                self.tail(name + ".torch-profiler.err", 2)
            self.failed = True
            return
        with open(trace) as f:
            reference = C.count_kineto_events(json.load(f), first, last)
        job = next((r.get("job") for r in self.state["verdicts"]
                    if r["name"] == name and r.get("result") in ("PASS", "FAIL")), None)
        if job is None:  # the verdict phase did not run it: an injected run of its own
            job = name + ".counts"
            rc, _, _ = self.run_injected(w, job)
            if rc != 0:
                entry["error"] = f"injected run failed (exit {rc})"
                self.failed = True
                return
            self.wait_for_steps(job, self.args.steps)
        steps, err = self.gpuspy("steps", "--job", job, timeout=60)
        if steps is None:
            entry["error"] = f"gpuspy steps: {err}"
            self.failed = True
            return
        step_list = [{"number": V._int(s.get("number")), "start_ns": V._int(s.get("start_ns")),
                      "end_ns": V._int(s.get("end_ns")), "process_id": V._int(s.get("process_id"))}
                     for s in steps.get("steps", []) if s.get("source", "").startswith("nvtx:")]
        chosen = [s for s in step_list if first <= s["number"] <= last]
        if not chosen:
            entry["error"] = f"gpuspy has no NVTX steps {first}-{last} for {job}"
            self.failed = True
            return
        pid = chosen[0]["process_id"]
        chosen = [s for s in chosen if s["process_id"] == pid]
        events, err = self.gpuspy("events", "--job", job, "--process", str(pid),
                                  "--from", str(min(s["start_ns"] for s in chosen)),
                                  "--to", str(max(s["end_ns"] for s in chosen)),
                                  "--limit", "5000000", timeout=300)
        if events is None:
            entry["error"] = f"gpuspy events: {err}"
            self.failed = True
            return
        if events.get("truncated"):
            entry["error"] = "gpuspy events answer truncated"
            self.failed = True
            return
        measured = C.count_gpuspy_events(chosen, events, first, last)
        rows, common = C.compare_counts(reference, measured)
        entry["rows"] = rows
        entry["steps"] = f"{first}-{last}" if len(common) == last - first + 1 else \
            f"{len(common)} of {first}-{last}"
        if len(common) != last - first + 1 or not all(ok for *_, ok in rows):
            self.failed = True
        log(f"{name}: counts " + ", ".join(f"{k} {ref}/{got}" for k, ref, got, _, _ in rows))

    def overhead(self, w):
        name = w["name"]
        entry = {"name": name}
        self.state["overhead"].append(entry)
        medians = {}
        for mode in ("baseline", "dormant", "capturing", "counters"):
            if self.out_of_time():
                entry["error"] = "out of the suite's time budget"
                return
            job = f"{name}.overhead.{mode}"
            if mode == "baseline":
                env = self.workload_env(job, inject=False, extra=w.get("env"))
            else:
                extra = dict(w.get("env") or {})
                if mode == "counters":  # capturing with the hardware counters sampled
                    extra["GPUSPY_COUNTERS"] = "1"
                env = self.workload_env(job, mode="ondemand" if mode == "dormant" else "always",
                                        extra=extra)
            log(f"{name}: overhead run, {mode}")
            rc, results, _ = self.run_process(self.command_for(w), env, w["timeout_s"], job)
            if rc != 0 or not results:
                entry["error"] = f"{mode} run failed (exit {rc}): {self.tail(job + '.err', 2)}"
                return
            medians[mode] = V.steady_median_ms(results[0]["step_ms"])
        entry.update(baseline_ms=medians["baseline"], dormant_ms=medians["dormant"],
                     capturing_ms=medians["capturing"], counters_ms=medians["counters"])
        self.counter_readings(w, f"{name}.overhead.counters")

    def counter_readings(self, w, job):
        """What the counters read in the run with GPUSPY_COUNTERS=1, per kernel class over the
        steady steps, checked against expected.json's "counters" bounds for the workload (the
        bf16 GEMMs' tensor pipes, the elementwise kernels' DRAM)."""
        bounds = self.expected.get("counters", {}).get(w["name"])
        if bounds is None:
            return
        entry = {"name": w["name"], "bounds": bounds}
        self.state.setdefault("counters", []).append(entry)
        reports, err = self.gpuspy("report", "--job", job, "--all")
        if reports is None:
            entry["error"] = f"gpuspy report: {err}"
            self.failed = True
            return
        by_class = {}
        for rep in reports.get("reports", []):
            if not rep.get("steady_state"):
                continue
            for k in rep.get("floor", {}).get("counters", {}).get("classes", []):
                r = k.get("readings", {})
                by_class.setdefault(k["kernel_class"], []).append(
                    (r.get("tensor_active_pct", 0.0), r.get("dram_throughput_pct", 0.0)))
        entry["readings"] = {c: {"tensor_active_pct": statistics.median(t for t, _ in v),
                                 "dram_throughput_pct": statistics.median(d for _, d in v),
                                 "steps": len(v)} for c, v in by_class.items()}
        entry["result"] = "PASS"
        for b in bounds:  # {"class": "gemm_tc", "reading": "tensor_active_pct", "min": 60}
            got = entry["readings"].get(b["class"], {}).get(b["reading"])
            if got is None or got < b["min"]:
                entry["result"] = "FAIL"
                self.failed = True
        log(f"{w['name']}: counters {entry['result']} {entry['readings']}")

    # --- output ---------------------------------------------------------------------------------

    def tail(self, log_name, lines):
        try:
            with open(os.path.join(self.logs, log_name)) as f:
                text = [line.rstrip() for line in f if line.strip()]
            return " / ".join(text[-lines:])[-400:]
        except OSError:
            return ""

    def write_results(self, final=False):
        v = self.state["verdicts"]
        counted = [r for r in v if not r.get("advisory")]
        passed = sum(1 for r in counted if r.get("result") == "PASS")
        failed = sum(1 for r in counted if r.get("result") in ("FAIL", "ERROR"))
        skipped = sum(1 for r in counted if r.get("result") == "SKIPPED")
        advisory = [f"{r['name']} {r.get('result', '?')}" for r in v if r.get("advisory")]
        count_bad = sum(1 for c in self.state["counts"]
                        if c.get("error") or not all(ok for *_, ok in c.get("rows", [])))
        line = f"verdicts: {passed} passed, {failed} failed, {skipped} skipped"
        if advisory:
            line += f" (advisory: {', '.join(advisory)})"
        if self.state["counts"]:
            line += f"; event counts: {len(self.state['counts']) - count_bad} ok, " \
                    f"{count_bad} off"
        if not final:
            line += " — still running"
        self.state["verdict_line"] = line
        self.state["elapsed_s"] = time.monotonic() - self.start
        with open(self.md_path, "w") as f:
            f.write(P.render_markdown(self.state))
        with open(self.json_path, "w") as f:
            json.dump(self.state, f, indent=1, default=str)

    def pack_logs(self):
        with tarfile.open(self.logs_tar, "w:gz") as tar:
            tar.add(self.logs, arcname=f"gpu-suite-logs-{self.date}")

    def main(self):
        a = self.args
        self.nvcc = shutil.which("nvcc") or next(
            (p for p in ("/usr/local/cuda/bin/nvcc",) if os.path.isfile(p)), None)
        self.state["system"] = system_info(self.nvcc, self.bins)
        log("system: " + "; ".join(f"{k}={v}" for k, v in self.state["system"].items()))
        wanted = set(a.only.split(",")) if a.only else None
        workloads = [w for w in self.expected["workloads"] if not wanted or w["name"] in wanted]
        try:
            if wanted and len(workloads) != len(wanted):
                unknown = wanted - {w["name"] for w in workloads}
                raise SetupError(f"--only names unknown workloads {sorted(unknown)}")
            self.setup_libraries()
            self.start_daemon()
        except SetupError as e:
            log(f"setup failed: {e}")
            self.state["setup_notes"].append(f"SETUP FAILED: {e}")
            self.write_results(final=True)
            self.pack_logs()
            return 2
        self.plain_cuda, self.plain_cuda_error = None, None
        if any(w["kind"] == "binary" for w in workloads):
            self.plain_cuda, self.plain_cuda_error = self.build_plain_cuda()
            log(f"plain_cuda: {self.plain_cuda or self.plain_cuda_error}")
        phases = a.phases.split(",")
        try:
            if "verdicts" in phases:
                for w in workloads:
                    self.verdict(w)
                    self.write_results()
            by_name = {w["name"]: w for w in workloads}
            if "counts" in phases:
                for name in self.expected["event_counts"]:
                    if name in by_name:
                        self.counts(by_name[name])
                        self.write_results()
            if "overhead" in phases:
                for name in self.expected["overhead"]:
                    if name in by_name:
                        self.overhead(by_name[name])
                        self.write_results()
        finally:
            self.stop_daemon()
            self.write_results(final=True)
            self.pack_logs()
        log(self.state["verdict_line"])
        log(f"results: {self.md_path}")
        return 1 if self.failed else 0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--bin-dir", required=True,
                   help="a gpuspy build directory or a tests/gpu/pack.sh output")
    p.add_argument("--results-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--expected", default=os.path.join(HERE, "expected.json"),
                   help="the expected table (default: tests/gpu/expected.json)")
    p.add_argument("--phases", default="verdicts,counts,overhead")
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--count-steps", default="10-19", help="steps compared with torch.profiler")
    p.add_argument("--deadline-s", type=float, default=480,
                   help="start nothing new after this many seconds (the device tool's commands "
                        "are limited to 600 s)")
    args = p.parse_args(argv)
    args.count_steps = tuple(int(x) for x in args.count_steps.split("-"))
    bad = set(args.phases.split(",")) - {"verdicts", "counts", "overhead"}
    if bad:
        p.error(f"unknown phases {sorted(bad)}")
    return args


if __name__ == "__main__":
    try:
        suite = Suite(parse_args())
    except (SetupError, ValueError, OSError) as e:  # no binaries, a broken expected table
        print(f"gpu suite: cannot start: {e}", file=sys.stderr)
        sys.exit(2)
    sys.exit(suite.main())
