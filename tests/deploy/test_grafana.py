"""deploy/grafana: the dashboard is valid Grafana JSON whose every query names only metrics and
labels a real gpuspyd exposes (read from its /metrics after synthetic jobs), uses every metric
it exposes, and, with a real Prometheus scraping that gpuspyd with deploy/prometheus's scrape
job, returns data for every panel and template variable."""
import json
import os
import re
import subprocess
import unittest
import urllib.parse
import urllib.request

import yaml

from deploy_support import (SOURCE_DIR, Daemon, TempDirTest, binary, deploy_path, free_port, http_get, read,
                            replay, wait_for)

DASHBOARD = deploy_path("grafana", "gpuspy-dashboard.json")
SCRAPE = deploy_path("prometheus", "gpuspy-scrape.yaml")
PROMETHEUS = "/usr/bin/prometheus"
JOBS = {"copyjob": "copy_heavy", "syncjob": "sync_stall", "ddpjob": "sync_stall"}
# Jobs replayed with several ranks: the per-rank families (rank_metrics.h) need one.
RANKS = {"ddpjob": 4}
# PromQL words that look like identifiers but are not metric names.
PROMQL_WORDS = {"sum", "min", "max", "avg", "count", "rate", "increase", "by", "without", "on",
                "ignoring", "group_left", "group_right", "and", "or", "unless", "label_values",
                "topk", "bottomk", "irate", "delta", "abs", "histogram_quantile", "offset", "bool"}


def dashboard():
    with open(DASHBOARD, encoding="utf-8") as f:
        return json.load(f)


def all_panels(d):
    for p in d["panels"]:
        yield p
        yield from p.get("panels", [])


def queries(d):
    """(panel title, expr) for every panel target and query variable."""
    out = [(p["title"], t["expr"]) for p in all_panels(d) for t in p.get("targets", [])]
    for v in d["templating"]["list"]:
        if v["type"] == "query":
            out.append((f"${v['name']}", v["query"]["query"]))
    return out


def substitute(expr):
    """Grafana's variables, as they resolve with "All" selected."""
    return (expr.replace("$__rate_interval", "10s").replace("$instance", ".*").replace("$job", ".*"))


def metric_names(expr):
    m = re.match(r"label_values\((.*),\s*\w+\)$", expr)
    if m:
        expr = m.group(1)
    body = re.sub(r'"[^"]*"', '""', expr)            # label values
    body = re.sub(r"\{[^}]*\}", "{}", body)           # matchers
    body = re.sub(r"\[[^\]]*\]", "[]", body)          # ranges
    body = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", body)
    return {w for w in re.findall(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*\b", body) if w not in PROMQL_WORDS}


def labels_used(expr):
    used = set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"", expr))
    for group in re.findall(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)", expr):
        used |= {l.strip() for l in group.split(",") if l.strip()}
    m = re.match(r"label_values\((.*),\s*(\w+)\)$", expr)
    if m:
        used.add(m.group(2))
    return used


class Exposition:
    """A real gpuspyd after two synthetic jobs: its /metrics families and their label names."""

    def __init__(self, tmp):
        self.grpc, self.http = free_port(), free_port()
        # With a token, as the hub runs: the scrape config must carry it.
        self.token_file = os.path.join(tmp, "token")
        with open(self.token_file, "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        os.chmod(self.token_file, 0o600)
        self.token = read(self.token_file).strip()
        # A node forwarding to a hub, so that the forwarding families are there too.
        hub_port = free_port()
        self.hub = Daemon([binary("GPUSPYD_BIN"), "--listen", f"127.0.0.1:{hub_port}", "--unix", "",
                           "--http", "", "--data-dir", os.path.join(tmp, "hub"), "--log-level", "warn"],
                          os.path.join(tmp, "hub.log"))
        self.daemon = Daemon([binary("GPUSPYD_BIN"), "--listen", f"127.0.0.1:{self.grpc}", "--unix", "",
                              "--http", f"127.0.0.1:{self.http}", "--data-dir", os.path.join(tmp, "store"),
                              "--token-file", self.token_file, "--log-level", "warn",
                              "--role", "node", "--forward-to", f"127.0.0.1:{hub_port}"],
                             os.path.join(tmp, "gpuspyd.log"))
        wait_for(lambda: self._ready(), 20, "gpuspyd's /metrics")
        for job, scenario in JOBS.items():
            replay(f"127.0.0.1:{self.grpc}", job, scenario=scenario, ranks=RANKS.get(job, 1),
                   env={**os.environ, "GPUSPY_TOKEN_FILE": self.token_file})
        self.text = self.metrics()
        self.families = set(re.findall(r"^# TYPE (\S+) ", self.text, re.M))
        self.labels = {f: set() for f in self.families}
        for name, labels in re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? ", self.text, re.M):
            self.labels.setdefault(name, set()).update(re.findall(r"(\w+)=\"", labels or ""))

    def metrics(self):
        request = urllib.request.Request(f"http://127.0.0.1:{self.http}/metrics",
                                         headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.read().decode()

    def _ready(self):
        try:
            return "gpuspy_up" in self.metrics()
        except OSError:
            return False


class DashboardJsonTest(unittest.TestCase):
    def test_structure(self):
        d = dashboard()
        self.assertEqual(d["uid"], "gpuspy-overview")
        self.assertGreaterEqual(d["schemaVersion"], 36)
        ids = [p["id"] for p in all_panels(d)]
        self.assertEqual(len(ids), len(set(ids)), "panel ids are unique")
        variables = {v["name"]: v for v in d["templating"]["list"]}
        self.assertEqual(variables["datasource"]["type"], "datasource")
        self.assertEqual(variables["datasource"]["query"], "prometheus")
        for p in all_panels(d):
            self.assertTrue(p.get("title"), p["id"])
            g = p["gridPos"]
            self.assertLessEqual(g["x"] + g["w"], 24, p["title"])
            if p["type"] == "row":
                continue
            # Every panel and query uses the templated data source, none a hard-coded uid.
            self.assertEqual(p["datasource"], {"type": "prometheus", "uid": "${datasource}"}, p["title"])
            self.assertTrue(p["targets"], p["title"])
            for t in p["targets"]:
                self.assertEqual(t["datasource"]["uid"], "${datasource}", p["title"])
                self.assertTrue(t["expr"].strip(), p["title"])
        # No two panels overlap.
        cells = {}
        for p in all_panels(d):
            g = p["gridPos"]
            for x in range(g["x"], g["x"] + g["w"]):
                for y in range(g["y"], g["y"] + g["h"]):
                    self.assertNotIn((x, y), cells, f"{p['title']} overlaps {cells.get((x, y))}")
                    cells[(x, y)] = p["title"]
        for name in ("instance", "job"):
            self.assertEqual(variables[name]["allValue"], ".*")

    def test_brackets_balance(self):
        for title, expr in queries(dashboard()):
            depth = 0
            for ch in expr:
                depth += {"(": 1, ")": -1}.get(ch, 0)
                self.assertGreaterEqual(depth, 0, f"{title}: {expr}")
            self.assertEqual(depth, 0, f"{title}: {expr}")


class DashboardAgainstGpuspydTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.exposition = Exposition(self.tmp)
        self._daemons += [self.exposition.daemon, self.exposition.hub]

    def test_queries_name_only_what_gpuspyd_exposes_and_use_all_of_it(self):
        e = self.exposition
        self.assertIn("gpuspy_job_primary_bottleneck", e.families)
        # The exposition's families are the ones collector/metrics/ declares.
        metrics_dir = os.path.join(SOURCE_DIR, "collector", "metrics")
        source = "".join(read(os.path.join(metrics_dir, f)) for f in sorted(os.listdir(metrics_dir))
                         if f.endswith(".cc"))
        self.assertIn("gpuspy_rank_comm_wait_seconds", e.families)
        self.assertEqual(e.families, set(re.findall(r'Family\(\s*"([a-z_]+)"', source)))
        used = set()
        for title, expr in queries(dashboard()):
            names = metric_names(expr)
            self.assertTrue(names, f"{title}: no metric in {expr}")
            unknown = names - e.families
            self.assertFalse(unknown, f"{title}: gpuspyd exposes no {sorted(unknown)}")
            allowed = set().union(*(e.labels[n] for n in names)) | {"instance"}
            self.assertLessEqual(labels_used(expr), allowed, f"{title}: {expr}")
            used |= names
        self.assertEqual(used, e.families, "every metric gpuspyd exposes has a panel")

    def test_every_panel_returns_data_from_a_real_prometheus(self):
        if not os.access(PROMETHEUS, os.X_OK):
            self.skipTest("prometheus is not installed (apt-get install prometheus): skipped")
        e = self.exposition
        config = yaml.safe_load(read(SCRAPE))
        job = config["scrape_configs"][0]
        self.assertEqual(job["authorization"]["type"], "Bearer")
        job.update({"scrape_interval": "1s", "scrape_timeout": "1s",
                    "static_configs": [{"targets": [f"127.0.0.1:{e.http}"]}]})
        job["authorization"]["credentials_file"] = e.token_file
        with open(os.path.join(self.tmp, "prometheus.yml"), "w") as f:
            yaml.safe_dump(config, f)
        port = free_port()
        log = open(os.path.join(self.tmp, "prometheus.log"), "w")
        self.addCleanup(log.close)
        prom = subprocess.Popen([PROMETHEUS, f"--config.file={self.tmp}/prometheus.yml",
                                 f"--storage.tsdb.path={self.tmp}/tsdb", f"--web.listen-address=127.0.0.1:{port}"],
                                stdout=log, stderr=subprocess.STDOUT)

        def stop():
            prom.terminate()
            try:
                prom.wait(timeout=20)
            except subprocess.TimeoutExpired:
                prom.kill()
        self.addCleanup(stop)

        def api(path, **params):
            try:
                body = http_get(port, f"/api/v1/{path}?{urllib.parse.urlencode(params, doseq=True)}")
            except OSError:
                return None
            return json.loads(body)

        # Enough scrapes for rate() over 10 s windows.
        def scraped():
            r = api("query", query="count_over_time(gpuspy_up[10s])")
            return r and r["data"]["result"] and float(r["data"]["result"][0]["value"][1]) >= 4
        wait_for(scraped, 60, "4 scrapes by Prometheus")

        for title, expr in queries(dashboard()):
            m = re.match(r"label_values\((.*),\s*(\w+)\)$", expr)
            if m:
                r = api(f"label/{m.group(2)}/values", **{"match[]": substitute(m.group(1))})
                self.assertEqual(r["status"], "success", f"{title}: {r}")
                if m.group(2) == "gpuspy_job":
                    # The training jobs, apart from Prometheus's own `job` (the scrape job).
                    self.assertEqual(set(r["data"]), set(JOBS), title)
                else:
                    self.assertTrue(r["data"], title)
                continue
            r = api("query", query=substitute(expr))
            self.assertIsNotNone(r, title)
            self.assertEqual(r["status"], "success", f"{title}: {expr}: {r}")
            self.assertTrue(r["data"]["result"], f"{title}: no data for {substitute(expr)}")
        # The bottleneck table names each single-rank job's scenario (a multi-rank job's verdict
        # is the cross-rank analysis's to give).
        table = next(t["expr"] for p in all_panels(dashboard()) if p["type"] == "table" for t in p["targets"])
        rows = api("query", query=substitute(table))["data"]["result"]
        verdicts = {r["metric"]["gpuspy_job"]: r["metric"]["bottleneck"] for r in rows}
        self.assertEqual(set(verdicts), set(JOBS))
        self.assertEqual({j: v for j, v in verdicts.items() if j not in RANKS},
                         {"copyjob": "copy_dominated", "syncjob": "sync_stall"})


if __name__ == "__main__":
    unittest.main()
