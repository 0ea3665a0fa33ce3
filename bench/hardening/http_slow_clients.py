#!/usr/bin/env python3
"""How long /healthz and a step report take while N clients hold HTTP connections open without
finishing a request (issue 22, item 3). Slow clients send a request line and headers one byte
every 0.5 s (a slowloris); one the daemon closes is opened again after 0.2 s, so N stay open or
keep trying. They connect from N/32 loopback addresses (127.0.1.x), 32 each, under the per-peer
cap; --one-peer puts them all on 127.0.1.1 instead. Each measured request is a fresh connection
from 127.0.0.1 with a 10 s timeout (a timeout counts as 10 s and is reported).

Usage: bench/hardening/http_slow_clients.py GPUSPYD REPLAY [--slow 0,8,64,256] [--requests 200]
Prints a markdown table row per N to stdout: label, N, /healthz requests made, their p50, p99 and
max in ms, the median report in ms, requests that failed or timed out, slow connections the
daemon closed."""
import argparse
import os
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REQUEST = b"GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000 + b"\r\n\r\n"


def start_daemon(binary, work):
    port_file = os.path.join(work, "grpc.port")
    http_file = os.path.join(work, "http.port")
    log = open(os.path.join(work, "gpuspyd.log"), "w")
    proc = subprocess.Popen(
        [binary, "--listen", "127.0.0.1:0", "--port-file", port_file, "--unix", "",
         "--http", "127.0.0.1:0", "--http-port-file", http_file, "--data-dir",
         os.path.join(work, "store"), "--log-level", "warn"], stdout=log, stderr=log)
    for _ in range(200):
        if os.path.exists(port_file) and os.path.exists(http_file):
            return proc, int(open(port_file).read()), int(open(http_file).read())
        time.sleep(0.05)
    proc.kill()
    sys.exit("gpuspyd did not start; see " + log.name)


class SlowClients:
    """n connections trickling a request, re-opened when the daemon closes them."""

    def __init__(self, port, n, one_peer):
        self.port, self.n, self.one_peer = port, n, one_peer
        self.stop = threading.Event()
        self.closed_by_server = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def source(self, i):
        return "127.0.1.1" if self.one_peer else "127.0.1.%d" % (1 + i // 32)

    def open(self, i):
        s = socket.socket()
        s.setblocking(False)
        s.bind((self.source(i), 0))
        try:
            s.connect(("127.0.0.1", self.port))
        except BlockingIOError:
            pass
        return s

    def run(self):
        sel = selectors.DefaultSelector()
        conns = {}  # i -> [socket, bytes sent, next send time]
        reopen = {}  # i -> when
        for i in range(self.n):
            conns[i] = [self.open(i), 0, time.monotonic()]
            sel.register(conns[i][0], selectors.EVENT_READ, i)
        while not self.stop.is_set():
            now = time.monotonic()
            for i, (s, sent, due) in list(conns.items()):
                if now >= due:
                    try:
                        s.send(REQUEST[sent % len(REQUEST):sent % len(REQUEST) + 1])
                        conns[i][1] += 1
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        sel.unregister(s)
                        s.close()
                        del conns[i]
                        reopen[i] = now + 0.2
                        self.closed_by_server += 1
                        continue
                    conns[i][2] = now + 0.5
            for key, _ in sel.select(timeout=0.05):
                i = key.data
                s = conns[i][0]
                try:
                    data = s.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:  # closed by the daemon (deadline or cap)
                    sel.unregister(s)
                    s.close()
                    del conns[i]
                    reopen[i] = time.monotonic() + 0.2
                    self.closed_by_server += 1
            for i, when in list(reopen.items()):
                if time.monotonic() >= when:
                    del reopen[i]
                    conns[i] = [self.open(i), 0, time.monotonic()]
                    sel.register(conns[i][0], selectors.EVENT_READ, i)
        for s, _, _ in conns.values():
            s.close()


def timed_get(port, path, timeout=10.0):
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout - (time.monotonic() - t0))
            s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path)
                      .encode())
            body = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                body += chunk
        ok = body.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return min(time.monotonic() - t0, timeout), ok


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpuspyd")
    ap.add_argument("replay")
    ap.add_argument("--slow", default="0,8,64,256")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--budget", type=float, default=40, help="s of /healthz requests per N at most")
    ap.add_argument("--settle", type=float, default=1.5, help="s for the slow clients to connect")
    ap.add_argument("--one-peer", action="store_true")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="http-slow-")
    proc, grpc_port, http_port = start_daemon(args.gpuspyd, work)
    try:
        subprocess.run([args.replay, "--collector", "127.0.0.1:%d" % grpc_port, "--job", "bench",
                        "--steps", "20", "--ranks", "2"], check=True, stdout=subprocess.DEVNULL)
        timed_get(http_port, "/api/jobs/bench/report?last=1")  # analysed once, then cached
        for n in [int(x) for x in args.slow.split(",")]:
            slow = SlowClients(http_port, n, args.one_peer)
            slow.thread.start()
            time.sleep(args.settle if n else 0)
            health, failed = [], 0
            began = time.monotonic()
            for _ in range(args.requests):
                if time.monotonic() - began > args.budget:
                    break
                t, ok = timed_get(http_port, "/healthz")
                health.append(t * 1000)
                failed += not ok
            reports = []
            for _ in range(10 if len(health) == args.requests else 2):
                t, ok = timed_get(http_port, "/api/jobs/bench/report?last=1")
                reports.append(t * 1000)
                failed += not ok
            slow.stop.set()
            slow.thread.join()
            print("| %s | %d | %d | %.1f | %.1f | %.1f | %.1f | %d | %d |" % (
                args.label, n, len(health), statistics.median(health), percentile(health, 99),
                max(health), statistics.median(reports), failed, slow.closed_by_server), flush=True)
            time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
