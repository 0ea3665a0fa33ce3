"""deploy/slurm: the TaskProlog's output for every way a job can (not) opt in, a real injected
process started with exactly what it exported (the installed, bundled library and the fake
CUDA), the epilog's cleanup, and the prolog against a stand-in systemctl. shellcheck lints all
three when it is installed."""
import json
import os
import subprocess
import textwrap
import unittest

from deploy_support import (TempDirTest, binary, deploy_path, free_port, installed_prefix, read,
                            run_cli, tool, wait_for, wait_healthy)

SLURM = deploy_path("slurm")
TASK_PROLOG = os.path.join(SLURM, "task_prolog.sh")
PROLOG = os.path.join(SLURM, "prolog.sh")
EPILOG = os.path.join(SLURM, "epilog.sh")


def exports(stdout):
    """What slurmstepd does with a TaskProlog's output: `export NAME=value` lines."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export "):].partition("=")
            out[name] = value
    return out


class SlurmTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.prefix = os.path.join(self.tmp, "opt-gpuspy")
        os.makedirs(os.path.join(self.prefix, "lib"))
        open(os.path.join(self.prefix, "lib", "libgpuspy.so"), "w").close()
        self.conf = self.write_conf(GPUSPY_PREFIX=self.prefix, GPUSPY_SPILL_BASE=os.path.join(self.tmp, "spill"))

    def write_conf(self, **values):
        path = os.path.join(self.tmp, "slurm.env")
        with open(path, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in values.items())
        return path

    def task_prolog(self, **env):
        base = {"PATH": "/usr/bin:/bin", "GPUSPY_SLURM_CONF": self.conf, "SLURM_JOB_ID": "4242",
                "SLURM_PROCID": "0"}
        r = subprocess.run([TASK_PROLOG], env={**base, **env}, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_shellcheck_finds_nothing(self):
        shellcheck = tool("shellcheck")
        r = subprocess.run([shellcheck, "-x", "prolog.sh", "epilog.sh", "task_prolog.sh"], cwd=SLURM,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_job_that_does_not_opt_in_is_left_alone(self):
        for value in (None, "", "0", "no"):
            env = {} if value is None else {"GPUSPY": value}
            self.assertEqual(self.task_prolog(**env), "", value)

    def test_opted_in_job_gets_the_library_dormant_mode_and_its_job_id(self):
        uid = os.getuid()
        self.assertEqual(exports(self.task_prolog(GPUSPY="1")), {
            "LD_PRELOAD": f"{self.prefix}/lib/libgpuspy.so",
            "GPUSPY_JOB": "4242",
            "GPUSPY_MODE": "ondemand",
            "GPUSPY_COLLECTOR": "127.0.0.1:7070",
            "GPUSPY_SPILL_DIR": f"{self.tmp}/spill/gpuspy-{uid}/spill/4242",
        })
        self.assertEqual(exports(self.task_prolog(GPUSPY="always"))["GPUSPY_MODE"], "always")

    def test_the_node_daemon_address_matches_the_systemd_unit(self):
        conf = dict(l.split("=", 1) for l in read(os.path.join(SLURM, "gpuspy-slurm.env")).splitlines()
                    if l and not l.startswith("#"))
        unit = read(deploy_path("systemd", "gpuspyd.service"))
        self.assertIn(f"Environment=GPUSPY_LISTEN={conf['GPUSPY_NODE_COLLECTOR']}\n", unit)
        self.assertEqual(conf["GPUSPY_PREFIX"] + "/bin/gpuspyd", unit.split("ExecStart=")[1].split()[0])

    def test_what_the_job_set_itself_is_kept(self):
        out = exports(self.task_prolog(GPUSPY="1", GPUSPY_MODE="always", GPUSPY_JOB="mine",
                                       GPUSPY_COLLECTOR="10.0.0.5:7070", GPUSPY_SPILL_DIR="/scratch/s",
                                       LD_PRELOAD="/usr/lib/libjemalloc.so.2"))
        self.assertEqual(out, {"LD_PRELOAD": f"{self.prefix}/lib/libgpuspy.so:/usr/lib/libjemalloc.so.2"})
        # Already preloaded (a nested srun): not twice.
        lib = f"{self.prefix}/lib/libgpuspy.so"
        self.assertEqual(exports(self.task_prolog(GPUSPY="1", LD_PRELOAD=lib))["LD_PRELOAD"], lib)

    def test_mistakes_are_reported_once_per_job_not_fatal(self):
        self.assertEqual(self.task_prolog(GPUSPY="bogus"),
                         "print gpuspy: GPUSPY=bogus is not 1, ondemand or always: not profiling\n")
        self.assertEqual(self.task_prolog(GPUSPY="bogus", SLURM_PROCID="3"), "")
        os.remove(os.path.join(self.prefix, "lib", "libgpuspy.so"))
        out = self.task_prolog(GPUSPY="1")
        self.assertRegex(out, r"^print gpuspy: .*libgpuspy.so is not installed on .*: not profiling\n$")
        self.assertEqual(exports(out), {})

    def test_epilog_removes_only_the_jobs_spill_directory(self):
        uid, gid = os.getuid(), os.getgid()
        base = os.path.join(self.tmp, "spill", f"gpuspy-{uid}", "spill")
        for job in ("4242", "77"):
            os.makedirs(os.path.join(base, job, "sub"))
            open(os.path.join(base, job, "sub", "batches.spill"), "w").close()
        env = {"PATH": "/usr/bin:/bin", "GPUSPY_SLURM_CONF": self.conf, "SLURM_JOB_UID": str(uid),
               "SLURM_JOB_GID": str(gid)}
        for bad in ("../77", "4242/../77", ""):
            r = subprocess.run([EPILOG], env={**env, "SLURM_JOB_ID": bad}, capture_output=True, timeout=30)
            self.assertEqual(r.returncode, 0)
        self.assertEqual(sorted(os.listdir(base)), ["4242", "77"])
        r = subprocess.run([EPILOG], env={**env, "SLURM_JOB_ID": "4242"}, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.listdir(base), ["77"])
        # A job that never spilled: nothing to do, still success.
        r = subprocess.run([EPILOG], env={**env, "SLURM_JOB_ID": "999"}, capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0)

    def fake_systemctl(self, load_state, active, start_rc=0):
        path = os.path.join(self.tmp, "systemctl")
        calls = os.path.join(self.tmp, "calls")
        with open(path, "w") as f:
            f.write(textwrap.dedent(f"""\
                #!/bin/sh
                echo "$*" >> {calls}
                case "$1" in
                  show) echo {load_state} ;;
                  is-active) exit {0 if active else 3} ;;
                  start) exit {start_rc} ;;
                esac
                """))
        os.chmod(path, 0o755)
        if os.path.exists(calls):
            os.remove(calls)
        return path, calls

    def prolog_calls(self, systemctl, calls):
        r = subprocess.run([PROLOG], env={"GPUSPY_SLURM_CONF": self.conf, "GPUSPY_SYSTEMCTL": systemctl,
                                          "SLURM_JOB_ID": "4242"}, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, "a failing prolog drains the node: it must always succeed")
        if not os.path.exists(calls):
            return []
        with open(calls) as f:
            return f.read().splitlines()

    def test_prolog_starts_the_node_daemon_when_it_is_down_and_never_fails(self):
        self.assertEqual(self.prolog_calls(*self.fake_systemctl("loaded", active=True)),
                         ["show --property=LoadState --value gpuspyd.service", "is-active --quiet gpuspyd.service"])
        self.assertEqual(self.prolog_calls(*self.fake_systemctl("loaded", active=False))[-1],
                         "start --no-block gpuspyd.service")
        self.prolog_calls(*self.fake_systemctl("loaded", active=False, start_rc=1))
        self.assertEqual(len(self.prolog_calls(*self.fake_systemctl("not-found", active=False))), 1)


class InjectedJobTest(TempDirTest):
    """A 'job task' started the way slurmstepd would after the TaskProlog: the installed library
    (bundled as in the image when patchelf exists), the fake CUDA, a real node gpuspyd."""

    def test_opted_in_task_registers_dormant_under_its_slurm_job_id(self):
        fake_train = binary("FAKE_TRAIN_BIN")
        fake_cupti = os.environ.get("FAKE_CUPTI_LIB", "")
        prefix = installed_prefix(self.tmp)
        bundled = subprocess.run(["sh", "-c", "command -v patchelf"], capture_output=True).returncode == 0
        if bundled:
            subprocess.run([deploy_path("docker", "bundle-inject-deps.sh"), os.path.join(prefix, "lib")],
                           check=True, capture_output=True)
        port = free_port()
        node = self.daemon([binary("GPUSPYD_BIN"), "--listen", f"127.0.0.1:{port}", "--unix", "", "--http", "",
                            "--data-dir", os.path.join(self.tmp, "store"), "--log-level", "warn"], "node")
        collector = f"127.0.0.1:{port}"
        wait_healthy(node, collector)
        conf = os.path.join(self.tmp, "slurm.env")
        with open(conf, "w") as f:
            f.write(f"GPUSPY_PREFIX={prefix}\nGPUSPY_NODE_COLLECTOR={collector}\n"
                    f"GPUSPY_SPILL_BASE={self.tmp}/spill\n")
        task_env = {"PATH": "/usr/bin:/bin", "HOME": self.tmp, "SLURM_JOB_ID": "5150", "SLURM_PROCID": "0",
                    "SLURM_LOCALID": "0", "SLURM_NTASKS": "1", "SLURM_JOB_NAME": "train"}
        r = subprocess.run([TASK_PROLOG], env={**task_env, "GPUSPY": "1", "GPUSPY_SLURM_CONF": conf},
                           capture_output=True, text=True, timeout=30, check=True)
        task_env.update(exports(r.stdout))
        task_env.update({"GPUSPY_CUPTI_PATH": fake_cupti, "GPUSPY_LOG": "info"})
        # Long enough (200 steps of 20 ms) to be seen live.
        proc = subprocess.Popen([fake_train, "--steps", "200", "--sleep-us", "20000", "--print-maps"], env=task_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())

        def dormant():
            r = run_cli(collector, "--json", "jobs", "--processes", "--job", "5150")
            if r.returncode != 0:
                return None
            for job in json.loads(r.stdout).get("jobs", []):
                for p in job.get("processes", []):
                    if p.get("state") == "dormant":
                        return p
            return None
        process = wait_for(dormant, 30, "job 5150's process, dormant, at the node daemon")
        self.assertEqual(process["identity"]["job_id"], "5150")
        self.assertIn("DORMANT", process.get("mode", "").upper(), process)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn(f"{prefix}/lib/libgpuspy_core.so", out, err)
        if bundled:
            self.assertIn(f"{prefix}/lib/gpuspy-deps/libgrpc++.so", out, "the bundle is what got loaded")

    def test_epilog_delivers_what_a_task_left_in_its_spill_before_removing_it(self):
        fake_train = binary("FAKE_TRAIN_BIN")
        prefix = installed_prefix(self.tmp)
        port = free_port()
        collector = f"127.0.0.1:{port}"
        conf = os.path.join(self.tmp, "slurm.env")
        with open(conf, "w") as f:
            f.write(f"GPUSPY_PREFIX={prefix}\nGPUSPY_NODE_COLLECTOR={collector}\n"
                    f"GPUSPY_SPILL_BASE={self.tmp}/spill\n")
        task_env = {"PATH": "/usr/bin:/bin", "HOME": self.tmp, "SLURM_JOB_ID": "5151", "SLURM_PROCID": "0"}
        r = subprocess.run([TASK_PROLOG], env={**task_env, "GPUSPY": "always", "GPUSPY_SLURM_CONF": conf},
                           capture_output=True, text=True, timeout=30, check=True)
        task_env.update(exports(r.stdout))
        # The node daemon is down while the task runs; the task gives up at exit and leaves its
        # spill (and, with GPUSPY_ADOPT_SPILLS=0 here, nobody else in the job takes it).
        task_env.update({"GPUSPY_CUPTI_PATH": os.environ.get("FAKE_CUPTI_LIB", ""),
                         "GPUSPY_EXIT_TIMEOUT_MS": "100", "GPUSPY_ADOPT_SPILLS": "0"})
        t = subprocess.run([fake_train, "--steps", "20", "--kernels", "10"], env=task_env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(t.returncode, 0, t.stderr)
        spill_dir = task_env["GPUSPY_SPILL_DIR"]
        self.assertEqual(len([n for n in os.listdir(spill_dir) if n.endswith(".spill")]), 1, t.stderr)

        node = self.daemon([binary("GPUSPYD_BIN"), "--listen", collector, "--unix", "", "--http", "",
                            "--data-dir", os.path.join(self.tmp, "store"), "--log-level", "warn"], "node")
        wait_healthy(node, collector)
        env = {"PATH": "/usr/bin:/bin", "GPUSPY_SLURM_CONF": conf, "SLURM_JOB_UID": str(os.getuid()),
               "SLURM_JOB_GID": str(os.getgid()), "SLURM_JOB_ID": "5151"}
        r = subprocess.run([EPILOG], env=env, capture_output=True, text=True, timeout=150)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(spill_dir))
        jobs = json.loads(run_cli(collector, "--json", "jobs", "--processes", "--job", "5151").stdout)
        processes = [p for j in jobs.get("jobs", []) for p in j.get("processes", [])]
        self.assertEqual(len(processes), 1, jobs)
        self.assertGreater(int(processes[0].get("event_count", 0)), 0, processes[0])


if __name__ == "__main__":
    unittest.main()
