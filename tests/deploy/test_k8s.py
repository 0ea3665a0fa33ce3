"""deploy/k8s: every manifest parsed and cross-checked the way an API server and kubelet would
reject it (no cluster here; `kubectl kustomize` renders the kustomization when kubectl exists),
and the node and hub containers' arguments run for real: ConfigMap values substituted, host
paths in a temp dir, the liveness probe's command, a job sent to the node's socket and found at
the hub."""
import glob
import json
import os
import re
import shutil
import subprocess
import unittest
import urllib.error
import urllib.request

import yaml

from deploy_support import (SOURCE_DIR, TempDirTest, binary, deploy_path, flags_in, free_port,
                            gpuspyd_flags, http_get, job_ids, read, replay, run_cli, tool,
                            wait_for, wait_healthy)

K8S = deploy_path("k8s")
WORKLOADS = ("DaemonSet", "Deployment", "Job", "StatefulSet")
# gpuspyd's flags that take no value.
BOOLEAN_FLAGS = {"--unix-shared", "--insecure-allow-remote"}
TOKEN_DIR = "/etc/gpuspy/token"


def load(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def manifests():
    """(relative path, document) for every YAML under deploy/k8s except the kustomization."""
    out = []
    for path in sorted(glob.glob(os.path.join(K8S, "**", "*.yaml"), recursive=True)):
        if os.path.basename(path) == "kustomization.yaml":
            continue
        out += [(os.path.relpath(path, K8S), d) for d in load(path)]
    return out


def find(kind, name):
    for _, d in manifests():
        if d["kind"] == kind and d["metadata"]["name"] == name:
            return d
    raise AssertionError(f"no {kind}/{name} in deploy/k8s")


def pod_spec(doc):
    return doc["spec"]["template"]["spec"]


def containers(spec):
    return spec.get("initContainers", []) + spec["containers"]


def project_version():
    return re.search(r"project\(gpuspy VERSION (\S+)", read(os.path.join(SOURCE_DIR, "CMakeLists.txt"))).group(1)


def expand(args, env):
    """Kubernetes' $(VAR) expansion of container args; an undefined variable stays as written."""
    return [re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), a) for a in args]


def container_env(container):
    """The literal environment a container gets: envFrom ConfigMaps, then env values."""
    env = {}
    for source in container.get("envFrom", []):
        env.update(find("ConfigMap", source["configMapRef"]["name"])["data"])
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
    return env


class ManifestTest(unittest.TestCase):
    def test_every_document_has_the_required_fields(self):
        docs = manifests()
        self.assertGreaterEqual(len(docs), 7)
        seen = set()
        for path, d in docs:
            for field in ("apiVersion", "kind", "metadata"):
                self.assertIn(field, d, f"{path}: no {field}")
            self.assertRegex(d["metadata"].get("name", ""), r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", path)
            key = (d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])
            self.assertNotIn(key, seen, f"{path}: duplicate {key}")
            seen.add(key)
            expected_api = {"Namespace": "v1", "ConfigMap": "v1", "Secret": "v1", "Service": "v1",
                            "DaemonSet": "apps/v1", "Deployment": "apps/v1", "Job": "batch/v1"}
            self.assertEqual(d["apiVersion"], expected_api[d["kind"]], path)
            if d["kind"] != "Namespace" and not path.startswith("examples/training"):
                self.assertEqual(d["metadata"].get("namespace"), "gpuspy", path)

    def test_kustomization_lists_every_manifest_but_the_examples(self):
        k = load(os.path.join(K8S, "kustomization.yaml"))[0]
        expected = sorted(os.path.basename(p) for p in glob.glob(os.path.join(K8S, "*.yaml"))
                          if not p.endswith("kustomization.yaml"))
        self.assertEqual(sorted(k["resources"]), expected)
        self.assertEqual(k["namespace"], "gpuspy")
        images = {i["name"]: i for i in k["images"]}
        self.assertEqual(images["gpuspy"]["newTag"], project_version(), "image tag = project version")

    def test_workloads_are_consistent(self):
        for path, d in manifests():
            if d["kind"] not in WORKLOADS:
                continue
            spec = pod_spec(d)
            labels = d["spec"]["template"]["metadata"].get("labels", {})
            if d["kind"] != "Job":
                selector = d["spec"]["selector"]["matchLabels"]
                self.assertTrue(selector.items() <= labels.items(), f"{path}: selector does not match the pod labels")
            volumes = {v["name"] for v in spec.get("volumes", [])}
            self.assertEqual(len(volumes), len(spec.get("volumes", [])), f"{path}: duplicate volume names")
            for c in containers(spec):
                where = f"{path} {c['name']}"
                self.assertTrue(c.get("image"), where)
                mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
                self.assertEqual(len(mounts), len(set(mounts)), f"{where}: a path is mounted twice")
                for m in c.get("volumeMounts", []):
                    self.assertIn(m["name"], volumes, f"{where}: mounts undefined volume {m['name']}")
                if d["kind"] != "Job":
                    self.assertIn("memory", c.get("resources", {}).get("limits", {}), f"{where}: no memory limit")
                env_names = set(container_env(c))
                for e in c.get("env", []):
                    env_names.add(e["name"])
                    ref = e.get("valueFrom", {})
                    if "configMapKeyRef" in ref:
                        cm = find("ConfigMap", ref["configMapKeyRef"]["name"])
                        self.assertIn(ref["configMapKeyRef"]["key"], cm["data"], where)
                    if "secretKeyRef" in ref:
                        secret = find("Secret", ref["secretKeyRef"]["name"])
                        self.assertIn(ref["secretKeyRef"]["key"], secret["stringData"], where)
                for arg in c.get("args", []) + c.get("command", []):
                    for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", arg):
                        self.assertIn(var, env_names, f"{where}: $({var}) is not defined")
                ports = [p["containerPort"] for p in c.get("ports", [])]
                self.assertEqual(len(ports), len(set(ports)), where)
                for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                    for kind in ("httpGet", "tcpSocket"):
                        port = c.get(probe, {}).get(kind, {}).get("port")
                        if port is not None:
                            self.assertIn(port, [p.get("name") for p in c.get("ports", [])] + ports,
                                          f"{where}: {probe} port {port}")

    def test_gpuspy_containers_run_as_non_root_without_privileges(self):
        for path, d in manifests():
            if d["kind"] not in WORKLOADS or path.startswith("examples/"):
                continue
            for c in pod_spec(d)["containers"]:
                sc = c["securityContext"]
                self.assertTrue(sc["runAsNonRoot"], path)
                self.assertFalse(sc["allowPrivilegeEscalation"], path)
                self.assertEqual(sc["capabilities"]["drop"], ["ALL"], path)
                self.assertTrue(sc["readOnlyRootFilesystem"], path)
                self.assertEqual(c["image"], "gpuspy", f"{path}: kustomization.yaml sets the tag")

    def test_service_selects_the_hub_and_its_ports(self):
        svc = find("Service", "gpuspy-hub")
        hub = find("Deployment", "gpuspy-hub")
        labels = hub["spec"]["template"]["metadata"]["labels"]
        self.assertTrue(svc["spec"]["selector"].items() <= labels.items())
        ports = {p["name"]: p["containerPort"] for c in pod_spec(hub)["containers"] for p in c.get("ports", [])}
        for p in svc["spec"]["ports"]:
            target = p["targetPort"]
            self.assertIn(target, list(ports) + list(ports.values()), f"Service port {p['name']}")
        # What node daemons are told to forward to is this Service.
        hub_address = find("ConfigMap", "gpuspy-config")["data"]["GPUSPY_HUB"]
        host, port = hub_address.rsplit(":", 1)
        self.assertEqual(host.split(".")[:2], [svc["metadata"]["name"], svc["metadata"]["namespace"]])
        self.assertIn(int(port), [p["port"] for p in svc["spec"]["ports"] if p["name"] == "grpc"])
        # One hub per database: never two at once.
        self.assertEqual(hub["spec"]["replicas"], 1)
        self.assertEqual(hub["spec"]["strategy"]["type"], "Recreate")

    def test_node_daemonset_shares_socket_and_library_with_jobs(self):
        ds = find("DaemonSet", "gpuspy-node")
        spec = pod_spec(ds)
        main = spec["containers"][0]
        args = expand(main["args"], container_env(main))
        socket = args[args.index("--unix") + 1]
        self.assertEqual(main["env"][0], {"name": "GPUSPY_COLLECTOR", "value": "unix:" + socket})
        host_paths = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
        mounts = {m["mountPath"]: m["name"] for m in main["volumeMounts"] if m["name"] in host_paths}
        self.assertTrue(any(socket.startswith(p + "/") and host_paths[n] == p for p, n in mounts.items()),
                        "the socket lives in a hostPath")
        self.assertEqual(args[args.index("--data-dir") + 1], "/var/lib/gpuspy")
        self.assertEqual(host_paths[mounts["/var/lib/gpuspy"]], "/var/lib/gpuspy")
        init = spec["initContainers"][0]["args"][0]
        self.assertIn("install-inject-lib.sh /opt/gpuspy/lib /host/run/gpuspy", init)
        self.assertIn(os.path.dirname(socket).replace("/run/gpuspy", "/host/run/gpuspy"), init)
        self.assertTrue(spec["tolerations"] and spec["nodeSelector"])
        # The example job loads what the init container publishes and talks to this socket.
        job = find("Job", "resnet-train")
        train = pod_spec(job)["containers"][0]
        env = {e["name"]: e.get("value") for e in train["env"]}
        self.assertEqual(env["GPUSPY_COLLECTOR"], "unix:" + socket)
        self.assertEqual(env["LD_PRELOAD"], "/run/gpuspy/lib/libgpuspy.so")
        self.assertEqual(env["GPUSPY_MODE"], "ondemand")
        job_host = {v["name"]: v["hostPath"]["path"] for v in pod_spec(job)["volumes"] if "hostPath" in v}
        self.assertIn("/run/gpuspy", job_host.values())

    def test_gpuspyd_arguments_are_flags_it_has(self):
        flags = gpuspyd_flags()
        for name, kind in (("gpuspy-node", "DaemonSet"), ("gpuspy-hub", "Deployment")):
            args = pod_spec(find(kind, name))["containers"][0]["args"]
            self.assertLessEqual(set(flags_in(args)), flags, name)
            valued = [a for a in args if a not in BOOLEAN_FLAGS]
            self.assertEqual(len(valued) % 2, 0, f"{name}: every other flag takes a value")
            self.assertTrue(all(a.startswith("--") for a in valued[::2]), f"{name}: {valued}")

    def test_every_listener_beyond_loopback_requires_the_secret_token(self):
        """gpuspyd refuses to listen beyond loopback without a token; the forwarder needs the
        hub's. Both must come from the gpuspy-token Secret, mounted where the flags point."""
        secret = find("Secret", "gpuspy-token")
        for name, kind in (("gpuspy-node", "DaemonSet"), ("gpuspy-hub", "Deployment")):
            spec = pod_spec(find(kind, name))
            main = spec["containers"][0]
            env = container_env(main)
            args = expand(main["args"], env)
            self.assertNotIn("--insecure-allow-remote", args, name)
            token = args[args.index("--token-file") + 1]
            volumes = {v["name"]: v for v in spec["volumes"]}
            mounts = {m["mountPath"]: volumes[m["name"]] for m in main["volumeMounts"]}
            mount, key = os.path.split(token)
            self.assertEqual(mounts[mount]["secret"]["secretName"], "gpuspy-token", name)
            self.assertIn(key, secret["stringData"], name)
            # Root-owned Secret files, read by uid 10001 through the pod's fsGroup.
            self.assertEqual(spec["securityContext"]["fsGroup"], main["securityContext"]["runAsGroup"], name)
            self.assertEqual(mounts[mount]["secret"]["defaultMode"], 0o440, name)
            # The probes' `gpuspy stats` and the node's forwarder present the same token.
            self.assertEqual(env["GPUSPY_TOKEN_FILE"], token, name)
        hub = pod_spec(find("Deployment", "gpuspy-hub"))["containers"][0]
        args = hub["args"]
        self.assertTrue(args[args.index("--listen") + 1].startswith("0.0.0.0:"))
        self.assertEqual(os.path.dirname(args[args.index("--control-token-file") + 1]), TOKEN_DIR)
        self.assertEqual(hub["readinessProbe"]["httpGet"]["path"], "/healthz", "probes carry no token")

    def test_kubectl_kustomize_renders_it(self):
        kubectl = tool("kubectl")
        r = subprocess.run([kubectl, "kustomize", K8S], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        docs = [d for d in yaml.safe_load_all(r.stdout) if d]
        self.assertEqual(sorted(d["kind"] for d in docs),
                         ["ConfigMap", "DaemonSet", "Deployment", "Namespace", "Service"])
        for d in docs:
            if d["kind"] in WORKLOADS:
                for c in containers(pod_spec(d)):
                    self.assertEqual(c["image"], f"gpuspy:{project_version()}")


class ContainersRunTest(TempDirTest):
    """The node and hub containers' arguments, run as processes on this machine. The hub runs on
    the throwaway PostgreSQL of the gpuspy_postgres ctest fixture when there is one, else on the
    embedded store with the same arguments."""

    def setUp(self):
        super().setUp()
        # The Secret, as kubelet would mount it.
        tokens = os.path.join(self.tmp, "token")
        os.makedirs(tokens)
        for key in find("Secret", "gpuspy-token")["stringData"]:
            path = os.path.join(tokens, key)
            with open(path, "w") as f:
                f.write(os.urandom(32).hex() + "\n")
            os.chmod(path, 0o600)
        # Every CLI call below (probes, job listings) presents the ingest token, as the
        # containers' GPUSPY_TOKEN_FILE makes them do.
        os.environ["GPUSPY_TOKEN_FILE"] = os.path.join(tokens, "token")
        self.addCleanup(lambda: os.environ.pop("GPUSPY_TOKEN_FILE", None))

    def remap(self, args):
        return [a.replace("/run/gpuspy", os.path.join(self.tmp, "run")).replace(
            "/var/lib/gpuspy", os.path.join(self.tmp, "node-store")).replace(
            TOKEN_DIR, os.path.join(self.tmp, "token")) for a in args]

    def postgres(self):
        path = os.environ.get("GPUSPY_TEST_POSTGRES_FILE", "")
        psql = shutil.which("psql")
        if not path or not os.path.exists(path) or psql is None:
            return None
        base = read(path).splitlines()[0]
        db = f"gpuspy_deploy_{os.getpid()}_{self._testMethodName[5:20]}"
        create = subprocess.run([psql, f"{base} dbname=postgres", "-v", "ON_ERROR_STOP=1", "-qc",
                                 f"CREATE DATABASE {db}"], capture_output=True, text=True)
        if create.returncode != 0:
            return None

        def drop():
            for d in self._daemons:
                d.stop()
            subprocess.run([psql, f"{base} dbname=postgres", "-qc", f"DROP DATABASE IF EXISTS {db} WITH (FORCE)"],
                           capture_output=True)
        self.addCleanup(drop)
        return f"{base} dbname={db}"

    def start_hub(self):
        """The hub Deployment's container, on loopback ports. Returns (gRPC address, HTTP port)."""
        hub = pod_spec(find("Deployment", "gpuspy-hub"))["containers"][0]
        env = container_env(hub)
        conninfo = self.postgres()
        if conninfo is not None:
            env["GPUSPY_POSTGRES_CONNINFO"] = conninfo
        args = self.remap(expand(hub["args"], env))
        if conninfo is None:
            i = args.index("--postgres")
            args[i:i + 2] = ["--data-dir", os.path.join(self.tmp, "hub-store")]
        ports = {}
        for flag in ("--listen", "--http"):
            ports[flag] = free_port()
            j = args.index(flag)
            # Still on every interface: gpuspyd starts there only because the token is set.
            self.assertTrue(args[j + 1].startswith("0.0.0.0:"))
            args[j + 1] = f"0.0.0.0:{ports[flag]}"
        # PGPASSWORD as the Secret would set it (the test server does not ask for one).
        d = self.daemon([binary("GPUSPYD_BIN"), *args], "hub", env={**os.environ, "PGPASSWORD": "change-me"})
        address = f"127.0.0.1:{ports['--listen']}"
        wait_healthy(d, address, timeout_s=60)
        if conninfo is not None:
            self.assertIn("PostgreSQL", d.log_text())
        return address, ports["--http"], hub

    def test_hub_args_run_and_answer_the_readiness_probe(self):
        _, http, hub = self.start_hub()
        readiness = hub["readinessProbe"]["httpGet"]["path"]
        self.assertEqual(http_get(http, readiness).strip(), "ok")
        # Everything else on that port needs the token.
        with self.assertRaises(urllib.error.HTTPError) as refused:
            http_get(http, "/api/stats")
        self.assertEqual(refused.exception.code, 401)
        token = read(os.environ["GPUSPY_TOKEN_FILE"]).strip()
        request = urllib.request.Request(f"http://127.0.0.1:{http}/api/stats",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as r:
            self.assertIn("stats", json.loads(r.read().decode()))

    def test_node_args_run_forward_to_the_hub_and_pass_the_probe(self):
        hub, _, _ = self.start_hub()
        node = pod_spec(find("DaemonSet", "gpuspy-node"))["containers"][0]
        env = container_env(node)
        env["GPUSPY_HUB"] = hub  # the Service's address, on this machine
        args = self.remap(expand(node["args"], env))
        # The forwarder presents the container's GPUSPY_TOKEN_FILE to the hub.
        node_env = {**os.environ, "GPUSPY_TOKEN_FILE": self.remap([env["GPUSPY_TOKEN_FILE"]])[0]}
        d = self.daemon([binary("GPUSPYD_BIN"), *args], "node", env=node_env)
        collector = self.remap([env["GPUSPY_COLLECTOR"]])[0]
        wait_healthy(d, collector)
        # --unix-shared: jobs of every uid reach the socket (each is checked by its credentials).
        sock_dir = os.path.dirname(collector.removeprefix("unix:"))
        self.assertEqual(os.stat(sock_dir).st_mode & 0o777, 0o755)
        self.assertEqual(os.stat(collector.removeprefix("unix:")).st_mode & 0o777, 0o666)
        probe = node["livenessProbe"]["exec"]["command"]
        self.assertEqual(probe[0], "gpuspy")
        r = subprocess.run([binary("GPUSPY_BIN"), *probe[1:]], capture_output=True, text=True, timeout=30,
                           env={**os.environ, "GPUSPY_COLLECTOR": collector})
        self.assertEqual(r.returncode, 0, r.stderr)
        replay(collector, "k8s-job")
        wait_for(lambda: "k8s-job" in job_ids(hub), 30, "the job forwarded to the hub")
        self.assertEqual(run_cli(hub, "report", "--job", "k8s-job", "--last", "1").returncode, 0)


if __name__ == "__main__":
    unittest.main()
