"""A stand-in workload for testing suite.py without a GPU: streams a synthetic job through
gpuspy-replay ($REPLAY_BIN) to the collector the suite injected ($GPUSPY_COLLECTOR, $GPUSPY_JOB),
unless the suite ran it uninjected or dormant, and prints a GPUSUITE_RESULT line like the real
workloads (workloads/common.py).

usage: fake_workload.py --steps N --scenario S [--ranks R --slow-rank K]
"""
import argparse
import json
import os
import subprocess
import sys

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=30)
p.add_argument("--scenario", default="healthy")
p.add_argument("--ranks", type=int, default=1)
p.add_argument("--slow-rank", type=int, default=-1)
p.add_argument("--expect-per-step", default="", help="kernels,memcpys to report")
args = p.parse_args()

job = os.environ.get("GPUSPY_JOB")
if job and os.environ.get("GPUSPY_MODE", "always") != "ondemand":
    cmd = [os.environ["REPLAY_BIN"], "--collector", os.environ["GPUSPY_COLLECTOR"], "--job", job,
           "--scenario", args.scenario, "--steps", str(args.steps), "--ranks", str(args.ranks),
           "--slow-rank", str(args.slow_rank)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(r.stdout + r.stderr)
    if r.returncode != 0:
        sys.exit(r.returncode)
# Step times: a little slower when injected, so the overhead table has something to show.
base = 10.0 * (1.02 if job and os.environ.get("GPUSPY_MODE") == "always" else 1.0)
for rank in range(args.ranks):
    result = {"workload": "fake", "variant": args.scenario, "rank": rank, "steps": args.steps,
              "step_ms": [base + (5 if i < 2 else 0) for i in range(args.steps)]}
    if args.expect_per_step:
        k, m = (int(x) for x in args.expect_per_step.split(","))
        result["expect_per_step"] = {"kernels": k, "memcpys": m}
    print("GPUSUITE_RESULT " + json.dumps(result), flush=True)
