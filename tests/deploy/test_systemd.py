"""deploy/systemd: both units pass `systemd-analyze verify` (when installed) without a warning,
keep their hardening, and their ExecStart, expanded the way systemd does with the defaults and
the example environment files, runs: the node forwards to a hub and answers jobs on the
loopback address the SLURM scripts give them; a node without a hub stops with the exit status the
unit will not restart on."""
import os
import re
import shlex
import tempfile
import subprocess
import unittest

from deploy_support import (TempDirTest, binary, deploy_path, flags_in, free_port, gpuspyd_flags,
                            hub_command, job_ids, read, replay, run_cli, tool, wait_for, wait_healthy)

NODE_UNIT = deploy_path("systemd", "gpuspyd.service")
HUB_UNIT = deploy_path("systemd", "gpuspyd-hub.service")


def unit_entries(path):
    """[(section, key, value)] in file order."""
    out, section = [], None
    for line in read(path).splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        out.append((section, key, value))
    return out


def service(path):
    """Last value of each [Service] key (Environment= collected separately)."""
    return {k: v for s, k, v in unit_entries(path) if s == "Service" and k != "Environment"}


def credentials(path):
    """{id: source file} of LoadCredential= lines."""
    return dict(v.split(":", 1) for s, k, v in unit_entries(path) if s == "Service" and k == "LoadCredential")


def environment(path, env_file=None, credentials_dir="/run/credentials/unit"):
    """Environment= lines (with %d, the credentials directory), then the env file."""
    env = {}
    for s, k, v in unit_entries(path):
        if s == "Service" and k == "Environment":
            name, _, value = v.partition("=")
            env[name] = value.replace("%d", credentials_dir)
    env["CREDENTIALS_DIRECTORY"] = credentials_dir
    if env_file:
        for line in read(env_file).splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                name, _, value = line.partition("=")
                env[name.strip()] = value.strip()
    return env


def exec_start(path, env):
    """ExecStart as systemd runs it: "${VAR}" is one argument (even empty), a lone "$VAR" is split
    on whitespace."""
    argv = []
    for word in shlex.split(service(path)["ExecStart"].replace("%d", env["CREDENTIALS_DIRECTORY"])):
        lone = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if lone:
            argv += env.get(lone.group(1), "").split()
        else:
            argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), word))
    return argv


class UnitFileTest(unittest.TestCase):
    def test_systemd_analyze_verify_is_silent(self):
        analyze = tool("systemd-analyze")
        gpuspyd = binary("GPUSPYD_BIN")
        with tempfile.TemporaryDirectory() as tmp:
            for unit in (NODE_UNIT, HUB_UNIT):
                # verify checks that the binary exists: point it at the one built here.
                copy = os.path.join(tmp, os.path.basename(unit))
                with open(copy, "w") as f:
                    f.write(read(unit).replace("/opt/gpuspy/bin/gpuspyd", gpuspyd))
                r = subprocess.run([analyze, "verify", copy], capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertEqual(r.stdout + r.stderr, "", f"{os.path.basename(unit)}: warnings")

    def test_units_are_hardened_and_consistent_with_their_flags(self):
        flags = gpuspyd_flags()
        for unit in (NODE_UNIT, HUB_UNIT):
            svc = service(unit)
            argv = exec_start(unit, environment(unit))
            self.assertEqual(argv[0], "/opt/gpuspy/bin/gpuspyd", "the Dockerfile's and SLURM's install prefix")
            self.assertLessEqual(set(flags_in(argv)), flags, unit)
            for key, value in {"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
                               "CapabilityBoundingSet": "", "PrivateDevices": "yes", "ProtectHome": "yes",
                               "RestartPreventExitStatus": "2"}.items():
                self.assertEqual(svc.get(key), value, f"{os.path.basename(unit)}: {key}")
            # The socket's directory is the unit's RuntimeDirectory (ProtectSystem=strict makes
            # everything else read-only).
            socket = argv[argv.index("--unix") + 1]
            self.assertEqual(os.path.dirname(socket), "/run/" + svc["RuntimeDirectory"])
        node = service(NODE_UNIT)
        argv = exec_start(NODE_UNIT, environment(NODE_UNIT))
        self.assertEqual(argv[argv.index("--data-dir") + 1], "/var/lib/" + node["StateDirectory"])
        self.assertEqual(argv[argv.index("--role") + 1], "node")


def write_credentials(unit, directory):
    """What systemd would copy into the credentials directory: a fresh token per credential."""
    os.makedirs(directory, exist_ok=True)
    for name in credentials(unit):
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        os.chmod(path, 0o400)
    return directory


class UnitRunsTest(TempDirTest):
    def remap(self, argv, **ports):
        out = []
        for a in argv:
            a = a.replace("/var/lib/gpuspy", os.path.join(self.tmp, "state")).replace(
                "/run/gpuspy", os.path.join(self.tmp, "run"))
            for old, new in ports.items():
                a = a.replace(old, new)
            out.append(a)
        return [binary("GPUSPYD_BIN"), *out[1:]]

    def test_node_unit_serves_jobs_on_loopback_and_forwards_to_the_hub(self):
        creds = write_credentials(NODE_UNIT, os.path.join(self.tmp, "node-credentials"))
        hub_token = os.path.join(creds, "hub-token")
        # The hub, as its unit runs it, requires that token.
        hub_daemon, hub = hub_command(self.tmp, extra=("--token-file", hub_token))
        self._daemons.append(hub_daemon)
        env = environment(NODE_UNIT, deploy_path("systemd", "gpuspyd.env"), credentials_dir=creds)
        self.assertTrue(env["GPUSPY_HUB"], "the example env file names a hub")
        self.assertEqual(env["GPUSPY_TOKEN_FILE"], hub_token, "the forwarder presents the credential")
        env["GPUSPY_HUB"] = hub
        grpc, http = free_port(), free_port()
        argv = self.remap(exec_start(NODE_UNIT, env), **{"127.0.0.1:7070": f"127.0.0.1:{grpc}",
                                                          "127.0.0.1:7071": f"127.0.0.1:{http}"})
        node = self.daemon(argv, "node", env={**os.environ, "GPUSPY_TOKEN_FILE": env["GPUSPY_TOKEN_FILE"]})
        # Jobs on the node's loopback port need no token: they are known by their uid.
        wait_healthy(node, f"127.0.0.1:{grpc}")
        replay(f"127.0.0.1:{grpc}", "slurm-4242")
        with_token = {**os.environ, "GPUSPY_TOKEN_FILE": hub_token}
        wait_for(lambda: "slurm-4242" in job_ids(hub, env=with_token), 30, "the job forwarded to the hub")
        self.assertNotIn("slurm-4242", job_ids(hub), "the hub answers no one without the token")
        self.assertEqual(node.stop(), 0, "SIGTERM (systemctl stop) is a clean exit")

    def test_node_unit_without_a_hub_exits_2_and_is_not_restarted(self):
        argv = self.remap(exec_start(NODE_UNIT, environment(NODE_UNIT)),
                          **{"127.0.0.1:7070": f"127.0.0.1:{free_port()}", "127.0.0.1:7071": "127.0.0.1:0"})
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, int(service(NODE_UNIT)["RestartPreventExitStatus"]), r.stderr)
        self.assertIn("--forward-to", r.stderr)

    def test_hub_unit_command_runs(self):
        creds = write_credentials(HUB_UNIT, os.path.join(self.tmp, "hub-credentials"))
        self.assertEqual(set(credentials(HUB_UNIT)), {"token", "control-token"})
        env = environment(HUB_UNIT, deploy_path("systemd", "gpuspyd-hub.env"), credentials_dir=creds)
        argv = exec_start(HUB_UNIT, env)
        self.assertEqual(argv[argv.index("--token-file") + 1], os.path.join(creds, "token"))
        self.assertEqual(argv[argv.index("--control-token-file") + 1], os.path.join(creds, "control-token"))
        # No PostgreSQL here: the same command on the embedded store.
        i = argv.index("--postgres")
        argv[i:i + 2] = ["--data-dir", os.path.join(self.tmp, "hub-store")]
        grpc = free_port()
        # Still on every interface: gpuspyd accepts that only because the token is there.
        argv = self.remap(argv, **{"0.0.0.0:7070": f"0.0.0.0:{grpc}", "127.0.0.1:7071": "127.0.0.1:0"})
        argv = [a.replace("/run/gpuspy-hub", os.path.join(self.tmp, "run-hub")) for a in argv]
        hub = self.daemon(argv, "hub")
        wait_healthy(hub, f"127.0.0.1:{grpc}", env={**os.environ, "GPUSPY_TOKEN_FILE": os.path.join(creds, "token")})
        self.assertNotEqual(run_cli(f"127.0.0.1:{grpc}", "stats").returncode, 0, "no token, no answer")


if __name__ == "__main__":
    unittest.main()
