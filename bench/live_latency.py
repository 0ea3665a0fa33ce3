#!/usr/bin/env python3
"""How soon a step's report is available after the step ends, through the real path:
fake_train under LD_PRELOAD=libgpuspy.so -> gpuspyd -> `gpuspy report`. Prints a table row.

usage: live_latency.py BUILD_DIR [STEPS]
"""
import json, os, subprocess, sys, tempfile, time

build = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
tmp = tempfile.mkdtemp(prefix="gpuspy-latency.")
port_file = os.path.join(tmp, "port")
daemon = subprocess.Popen([f"{build}/collector/server/gpuspyd", "--listen", "127.0.0.1:0", "--unix", "", "--http", "",
                           "--data-dir", f"{tmp}/store", "--port-file", port_file, "--log-level", "warn"])
try:
    for _ in range(200):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.02)
    addr = "127.0.0.1:" + open(port_file).read().strip()
    env = dict(os.environ, LD_PRELOAD=f"{build}/lib/libgpuspy.so", GPUSPY_COLLECTOR=addr,
               GPUSPY_JOB="latency", GPUSPY_CUPTI_PATH=f"{build}/fake_cuda/lib/libcupti.so.13",
               GPUSPY_SPILL_DIR=f"{tmp}/spill")
    app = subprocess.Popen([f"{build}/tests/fake_cuda/fake_train", "--steps", str(steps),
                            "--kernels", "50", "--sleep-us", "250000"], env=env)
    seen = {}
    while app.poll() is None or len(seen) < steps:
        out = subprocess.run([f"{build}/viewer/cli/gpuspy", "--collector", addr, "--json", "steps",
                              "--job", "latency"], capture_output=True, text=True)
        now = time.time_ns()
        if out.returncode == 0:
            for s in json.loads(out.stdout).get("steps", []):
                n = int(s.get("number", 0))
                if n not in seen:
                    seen[n] = (now - int(s["end_ns"])) / 1e6  # the fake's clock is CLOCK_REALTIME
        if app.poll() is not None and len(seen) < steps:
            time.sleep(0.5)
            if len(seen) < steps:
                break
        time.sleep(0.02)
    lat = sorted(v for k, v in seen.items() if k < steps - 1)  # the last step ends with the process
    if not lat:
        print("| live step latency | no steps seen |")
        sys.exit(1)
    p = lambda q: lat[min(len(lat) - 1, int(q * (len(lat) - 1) + 0.5))]
    print(f"| live step latency (step end -> visible in `gpuspy steps`, GPUSPY_FLUSH_MS=100) | "
          f"{len(lat)} steps | median {p(0.5):.0f} ms | p90 {p(0.9):.0f} ms | max {lat[-1]:.0f} ms |")
finally:
    daemon.terminate()
    daemon.wait()
