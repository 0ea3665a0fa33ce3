#!/usr/bin/env python3
"""Scale test on one machine (loopback only): 1 hub + 4 node gpuspyd + 32 synthetic processes
(gpuspy-replay ranks, 8 per node, paced like live launch-heavy training). Mid-run one node
daemon and then the hub are SIGKILLed and restarted. Measures the hub's sustained ingest
(events/s, sampled every second), the end-to-end lag (last event produced -> stored at the hub),
and checks, per process, that the hub holds exactly what the producer sent: no loss, no
duplicates. Prints a markdown report.

usage: bench/scale_test.py [BUILD_DIR] [--steps N] [--batch-ms MS] [--nodes N] [--ranks-per-node R]
"""
import argparse, json, os, shutil, signal, subprocess, sys, tempfile, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("build", nargs="?", default="build")
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--batch-ms", type=int, default=200, help="one 4096-event batch per rank per this")
ap.add_argument("--nodes", type=int, default=4)
ap.add_argument("--ranks-per-node", type=int, default=8)
ap.add_argument("--kill-node-at", type=float, default=5.0)
ap.add_argument("--kill-hub-at", type=float, default=11.0)
ap.add_argument("--down-for", type=float, default=2.0)
args = ap.parse_args()
B = args.build
GPUSPYD, GPUSPY, REPLAY = (f"{B}/collector/server/gpuspyd", f"{B}/viewer/cli/gpuspy",
                           f"{B}/tools/replay/gpuspy-replay")
tmp = tempfile.mkdtemp(prefix="gpuspy-scale.")
procs = []


def start(name, extra, port=0):
    port_file = f"{tmp}/{name}.port.{time.time_ns()}"
    p = subprocess.Popen([GPUSPYD, "--listen", f"127.0.0.1:{port}", "--unix", "", "--http", "",
                          "--data-dir", f"{tmp}/{name}", "--port-file", port_file, "--log-level", "warn"]
                         + extra, stderr=open(f"{tmp}/{name}.log", "a"))
    for _ in range(500):
        if os.path.exists(port_file) and open(port_file).read().strip():
            return p, int(open(port_file).read())
        time.sleep(0.02)
    sys.exit(f"{name} did not start: " + open(f"{tmp}/{name}.log").read())


def cli(addr, *a):
    r = subprocess.run([GPUSPY, "--collector", addr, "--json", "--timeout", "30", *a],
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else None


def per_process(addr, job):
    jobs = cli(addr, "jobs") or {}
    out = {}
    for j in jobs.get("jobs", []):
        if j["job_id"] == job:
            for p in j["processes"]:
                out[p["identity"]["process_key"]] = (int(p.get("event_count", 0)), int(p.get("batch_count", 0)))
    return out


try:
    hub, hub_port = start("hub", ["--role", "hub"])
    hub_addr = f"127.0.0.1:{hub_port}"
    nodes = [start(f"node{n}", ["--role", "node", "--forward-to", hub_addr]) for n in range(args.nodes)]
    job = "scale"
    t0 = time.time()
    producers = []
    for n, (_, port) in enumerate(nodes):
        producers.append(subprocess.Popen(
            [REPLAY, "--collector", f"127.0.0.1:{port}", "--job", job, "--scenario", "launch_storm",
             "--ranks", str(args.ranks_per_node), "--first-rank", str(n * args.ranks_per_node),
             "--steps", str(args.steps), "--batch-events", "4096", "--batch-ms", str(args.batch_ms),
             "--retry-for", "120", "--seed", "7"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))

    # Hub ingest rate, sampled every second, while faults are injected on schedule.
    samples, events = [], []
    stop = threading.Event()

    def sample():
        last = None
        while not stop.is_set():
            s = cli(hub_addr, "stats")
            now = time.time() - t0
            if s is not None:
                stored = int(s["stats"].get("events_stored", 0))
                if last is not None and stored >= last[1]:
                    samples.append((now, (stored - last[1]) / (now - last[0])))
                last = (now, stored)
            else:
                last = None  # the hub is down (or restarted: its counters start over)
            stop.wait(1.0)

    sampler = threading.Thread(target=sample)
    sampler.start()
    faults = []
    time.sleep(max(0, args.kill_node_at - (time.time() - t0)))
    victim, victim_port = nodes[1]
    victim.send_signal(signal.SIGKILL); victim.wait()
    faults.append(f"node1 SIGKILLed at {time.time() - t0:.1f} s")
    time.sleep(args.down_for)
    nodes[1] = start("node1", ["--role", "node", "--forward-to", hub_addr], victim_port)
    faults.append(f"node1 restarted at {time.time() - t0:.1f} s")
    time.sleep(max(0, args.kill_hub_at - (time.time() - t0)))
    hub.send_signal(signal.SIGKILL); hub.wait()
    faults.append(f"hub SIGKILLed at {time.time() - t0:.1f} s")
    time.sleep(args.down_for)
    hub, _ = start("hub", ["--role", "hub"], hub_port)
    faults.append(f"hub restarted at {time.time() - t0:.1f} s")

    sent, batches = {}, 0
    for p in producers:
        out, err = p.communicate()
        if p.returncode != 0:
            sys.exit("producer failed: " + err)
        for line in out.splitlines():  # "rank R: E events in B batches, ..."
            sent[int(line.split()[1].rstrip(":"))] = int(line.split()[2])
            batches += int(line.split()[5])
    produced_at = time.time() - t0
    total = sum(sent.values())
    # Lag: until every process's counts at the hub equal the node's.
    caught_up_at = None
    deadline = time.time() + 120
    while time.time() < deadline:
        want = {}
        for n in range(args.nodes):
            want.update(per_process(f"127.0.0.1:{nodes[n][1]}", job))
        have = per_process(hub_addr, job)
        if len(want) == len(sent) and have == want:
            caught_up_at = time.time() - t0
            break
        time.sleep(0.2)
    stop.set(); sampler.join()
    hub_counts = per_process(hub_addr, job)
    hub_events = sum(e for e, _ in hub_counts.values())
    stats = (cli(hub_addr, "stats") or {}).get("stats", {})
    rates = sorted(r for _, r in samples if r > 0)
    med = rates[len(rates) // 2] if rates else 0
    wall = produced_at
    print(f"# Scale test: 1 hub + {args.nodes} nodes + {len(sent)} processes ({time.strftime('%Y-%m-%d')})\n")
    print(f"Machine: {os.cpu_count()} cores, everything on loopback. Reproduce: `bench/scale_test.py {B}`.\n")
    offered = total / batches * 1000 / args.batch_ms
    print(f"Load: launch_storm ranks, {args.steps} steps each, one batch (whole steps, "
          f"{total / batches:,.0f} events on average) per rank every {args.batch_ms} ms: "
          f"{offered:,.0f} events/s offered per rank, {offered * len(sent) / 1e6:.2f} M events/s in all.\n")
    print("Faults: " + "; ".join(faults) + ".\n")
    print("| measure | value |\n|---|---|")
    print(f"| events produced (32 ranks) | {total:,} |")
    print(f"| events at the hub | {hub_events:,} |")
    print(f"| lost | {total - hub_events:,} |")
    print(f"| processes at the hub / produced | {len(hub_counts)} / {len(sent)} |")
    print(f"| batches acknowledged as duplicates at the hub (after restarts; stored once) | {stats.get('batches_duplicate', 0)} |")
    print(f"| batches rejected / sequence gaps at the hub | {stats.get('batches_rejected', 0)} / {stats.get('sequence_gaps', 0)} |")
    print(f"| producers' wall time (incl. outages) | {wall:.1f} s |")
    print(f"| average hub ingest over the run | {total / wall / 1e6:.2f} M events/s |")
    print(f"| hub ingest, 1 s samples: median / max | {med / 1e6:.2f} / {(rates[-1] if rates else 0) / 1e6:.2f} M events/s |")
    print(f"| lag: last event produced -> all stored at the hub | "
          f"{(caught_up_at - produced_at) if caught_up_at else float('nan'):.1f} s |")
    ok = caught_up_at is not None and hub_events == total and len(hub_counts) == len(sent)
    print(f"\nResult: {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)
finally:
    for p in [hub] + [n[0] for n in nodes] if 'nodes' in dir() else []:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    shutil.rmtree(tmp, ignore_errors=True)
