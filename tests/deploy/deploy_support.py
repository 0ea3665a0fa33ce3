"""Helpers for the deployment tests: where things are, real gpuspyd processes, small parsers.

The tests read deploy/ from the source tree and run the binaries ctest names in the environment
(GPUSPYD_BIN, GPUSPY_BIN, REPLAY_BIN, ...); a test whose binary or tool is missing is skipped
with the reason, never failed.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

SOURCE_DIR = os.environ.get(
    "GPUSPY_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
DEPLOY = os.path.join(SOURCE_DIR, "deploy")


def deploy_path(*parts):
    return os.path.join(DEPLOY, *parts)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def binary(var):
    """The binary ctest passed in `var`, or skip."""
    path = os.environ.get(var, "")
    if not path or not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"{var} is not set to a built binary (run through ctest)")
    return path


def tool(name):
    path = shutil.which(name)
    if path is None:
        raise unittest.SkipTest(f"{name} is not installed: this check is skipped")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout_s=20.0, what="condition"):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(0.1)


def gpuspyd_flags():
    """Every --flag that the built gpuspyd accepts, from its --help."""
    out = subprocess.run([binary("GPUSPYD_BIN"), "--help"], capture_output=True, text=True,
                         check=True).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", out))


def flags_in(args):
    return [a.split("=", 1)[0] for a in args if a.startswith("--")]


class Daemon:
    """A gpuspyd started with `args`; stopped (SIGTERM, then SIGKILL) by stop() or `with`."""

    def __init__(self, args, log_path, env=None):
        self.args = args
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)

    def log_text(self):
        self.log.flush()
        return read(self.log_path)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def run_cli(collector, *args, timeout_s=30, env=None):
    return subprocess.run([binary("GPUSPY_BIN"), "--collector", collector, "--timeout", "5", *args],
                          capture_output=True, text=True, timeout=timeout_s, env=env)


def wait_healthy(daemon, collector, timeout_s=20.0, env=None):
    """Until `gpuspy stats` (the image's and the probes' health check) succeeds."""
    def ok():
        if not daemon.alive():
            raise AssertionError(f"gpuspyd exited: {daemon.log_text()}")
        return run_cli(collector, "stats", env=env).returncode == 0
    wait_for(ok, timeout_s, f"gpuspyd at {collector}")


def job_ids(collector, env=None):
    r = run_cli(collector, "--json", "jobs", env=env)
    if r.returncode != 0:
        return set()
    return {j.get("jobId", j.get("job_id")) for j in json.loads(r.stdout).get("jobs", [])}


def replay(collector, job, steps=4, ranks=1, scenario="sync_stall", env=None):
    r = subprocess.run([binary("REPLAY_BIN"), "--collector", collector, "--job", job, "--steps",
                        str(steps), "--ranks", str(ranks), "--scenario", scenario],
                       capture_output=True, text=True, timeout=60, env=env)
    if r.returncode != 0:
        raise AssertionError(f"gpuspy-replay failed: {r.stdout}{r.stderr}")


def http_get(port, path, timeout_s=10):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout_s) as r:
        return r.read().decode()


def hub_command(tmp, extra=()):
    """A hub gpuspyd on the embedded store with a free loopback port: what node daemons under
    test forward to. Returns (Daemon, address). With a --token-file in `extra`, it is ready when
    that token gets an answer."""
    port = free_port()
    d = Daemon([binary("GPUSPYD_BIN"), "--role", "hub", "--listen", f"127.0.0.1:{port}",
                "--unix", "", "--http", "", "--data-dir", os.path.join(tmp, "hub-store"),
                "--log-level", "warn", *extra], os.path.join(tmp, "hub.log"))
    address = f"127.0.0.1:{port}"
    env = None
    if "--token-file" in extra:
        env = {**os.environ, "GPUSPY_TOKEN_FILE": extra[list(extra).index("--token-file") + 1]}
    wait_healthy(d, address, env=env)
    return d, address


def installed_prefix(tmp):
    """`cmake --install` of the build tree into tmp/prefix: the layout the Dockerfile copies."""
    cmake = os.environ.get("CMAKE_COMMAND") or shutil.which("cmake")
    build = os.environ.get("GPUSPY_BUILD_DIR", "")
    if not cmake or not build or not os.path.isfile(os.path.join(build, "cmake_install.cmake")):
        raise unittest.SkipTest("GPUSPY_BUILD_DIR/CMAKE_COMMAND not set (run through ctest)")
    prefix = os.path.join(tmp, "prefix")
    r = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise AssertionError(f"cmake --install failed:\n{r.stdout}{r.stderr}")
    return prefix


class TempDirTest(unittest.TestCase):
    """A test with a fresh temporary directory in self.tmp (kept, with a note, on failure)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpuspy-deploy-")
        self.addCleanup(self._cleanup)
        self._daemons = []

    def daemon(self, args, name, env=None):
        d = Daemon(args, os.path.join(self.tmp, name + ".log"), env=env)
        self._daemons.append(d)
        return d

    def _cleanup(self):
        for d in self._daemons:
            d.stop()
        outcome = getattr(self, "_outcome", None)
        failed = outcome is not None and not getattr(outcome, "success", True)
        if failed:
            print(f"(kept {self.tmp} for inspection)")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
