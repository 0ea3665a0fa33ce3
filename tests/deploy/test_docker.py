"""deploy/docker: the Dockerfile (no Docker daemon here, so: parsed, its package lists checked
against Debian 12's archive and against what the built binaries link, its COPY sources checked)
and the install + bundle steps it runs, run for real on this build tree."""
import fnmatch
import os
import re
import shlex
import stat
import subprocess
import unittest

from deploy_support import (SOURCE_DIR, TempDirTest, binary, deploy_path, flags_in, free_port,
                            gpuspyd_flags, installed_prefix, read, tool, wait_healthy)

DOCKERFILE = deploy_path("docker", "Dockerfile")

# scripts/install-deps.sh packages the image build does not need: tests, benchmarks, fuzzing,
# the browser tests, plots, and the developer's conveniences.
TEST_ONLY_PACKAGES = {
    "ccache", "git", "python3", "python3-yaml", "shellcheck", "libgtest-dev", "libgmock-dev",
    "libbenchmark-dev", "clang", "libclang-rt-14-dev", "postgresql", "prometheus", "gnuplot-nox",
    "chromium", "fonts-dejavu-core", "nodejs", "npm",
}
# In every Debian image already (apt itself depends on them).
BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1"}
# glibc and the C++ runtime come from the job's image, not the bundle (bundle-inject-deps.sh).
NOT_BUNDLED = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so", "libpthread.so",
               "librt.so", "libresolv.so", "libutil.so", "libstdc++.so", "libgcc_s.so")


def instructions():
    """(stage index, INSTRUCTION, argument text) for each instruction, continuations joined."""
    out, stage, pending = [], -1, ""
    for line in read(DOCKERFILE).splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        text = pending + stripped
        pending = ""
        word, _, rest = text.partition(" ")
        word = word.upper()
        if word == "FROM":
            stage += 1
        out.append((stage, word, rest.strip()))
    return out


def apt_packages(run_text):
    """Packages named by `apt-get install` commands in a RUN's text."""
    pkgs = []
    text = "\n".join(l for l in run_text.splitlines() if not l.lstrip().startswith("#"))
    for command in re.split(r"&&|;|\n|\|\|", text):
        words = shlex.split(command)
        if "apt-get" in words and "install" in words:
            pkgs += [w for w in words[words.index("install") + 1:]
                     if re.fullmatch(r"[a-z0-9][a-z0-9+.${}_-]*", w)]
    return pkgs


def stage_packages(stage):
    return [p for s, word, text in instructions() if s == stage and word == "RUN"
            for p in apt_packages(text)]


def exec_form(text):
    import json
    return json.loads(text)


class DockerfileTest(unittest.TestCase):
    def test_two_stages_debian_12_build_then_slim_runtime(self):
        ins = instructions()
        args = {t.split("=", 1)[0]: t.split("=", 1)[1] for s, w, t in ins if w == "ARG" and "=" in t}
        self.assertEqual(args.get("DEBIAN_RELEASE"), "bookworm")
        froms = [t for _, w, t in ins if w == "FROM"]
        self.assertEqual(froms, ["debian:${DEBIAN_RELEASE} AS build",
                                 "debian:${DEBIAN_RELEASE}-slim AS runtime"])
        final = [(w, t) for s, w, t in ins if s == 1]
        # The runtime stage takes only the install tree from the build stage.
        copies = [t for w, t in final if w == "COPY"]
        self.assertEqual(copies, ["--from=build /opt/gpuspy /opt/gpuspy"])
        user = [t for w, t in final if w == "USER"]
        self.assertEqual(len(user), 1)
        self.assertNotIn(user[0].split(":")[0], ("0", "root"), "the image must not run as root")
        self.assertEqual(sorted(" ".join(t for w, t in final if w == "EXPOSE").split()), ["7070", "7071"])
        self.assertEqual(exec_form([t for w, t in final if w == "ENTRYPOINT"][0]), ["gpuspyd"])
        self.assertTrue(any(w == "HEALTHCHECK" for w, _ in final))

    def test_copy_sources_and_scripts_exist_in_the_repository(self):
        for stage, word, text in instructions():
            if word == "COPY" and not text.startswith("--from"):
                for src in text.split()[:-1]:
                    self.assertTrue(os.path.exists(os.path.join(SOURCE_DIR, src)), src)
            if word == "RUN":
                for path in re.findall(r"\b(deploy/[\w./-]+)", text):
                    full = os.path.join(SOURCE_DIR, path)
                    self.assertTrue(os.path.isfile(full), path)
                    if path.endswith(".sh"):
                        self.assertTrue(os.stat(full).st_mode & stat.S_IXUSR, f"{path} is not executable")

    def test_dockerignore_drops_build_trees_but_not_sources(self):
        patterns = [l.strip() for l in read(DOCKERFILE + ".dockerignore").splitlines()
                    if l.strip() and not l.startswith("#")]

        def ignored(path):
            return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path.split("/")[0], p)
                       or (p.startswith("**/") and fnmatch.fnmatch(path.split("/")[-1], p[3:]))
                       for p in patterns)
        for kept in ["CMakeLists.txt", "proto/gpuspy/v1/events.proto", "deploy/docker/bundle-inject-deps.sh",
                     "inject/core/CMakeLists.txt", "collector/server/gpuspyd_main.cc", "cmake/GpuspyWarnings.cmake"]:
            self.assertFalse(ignored(kept), kept)
        for dropped in ["build", "build-asan", ".git", "tests/browser/node_modules"]:
            self.assertTrue(ignored(dropped), dropped)

    def test_build_stage_has_every_build_dependency_of_install_deps(self):
        text = read(os.path.join(SOURCE_DIR, "scripts", "install-deps.sh"))
        wanted = set(apt_packages(text.replace("\\\n", " "))) - TEST_ONLY_PACKAGES
        self.assertIn("libgrpc++-dev", wanted)
        missing = wanted - set(stage_packages(0))
        self.assertFalse(missing, f"in scripts/install-deps.sh but not in the Dockerfile's build stage "
                                  f"(or add them to TEST_ONLY_PACKAGES): {sorted(missing)}")

    def test_every_package_exists_in_debian_12(self):
        tool("apt-cache")
        if subprocess.run(["apt-cache", "show", "libc6"], capture_output=True).returncode != 0:
            self.skipTest("apt lists are empty (run apt-get update): package check skipped")
        pkgs = set()
        for stage in (0, 1):
            for pkg in stage_packages(stage):
                if "${CUDA_VERSION}" in pkg:
                    self.assertTrue(pkg.startswith("cuda-"), pkg)  # NVIDIA's repository
                else:
                    pkgs.add(pkg)
        self.assertGreater(len(pkgs), 20)
        out = subprocess.run(["apt-cache", "show", "--no-all-versions", *sorted(pkgs)], capture_output=True,
                             text=True).stdout
        found = set(re.findall(r"^Package: (\S+)", out, re.M))
        self.assertFalse(pkgs - found, f"not Debian 12 packages: {sorted(pkgs - found)}")

    def test_runtime_packages_cover_what_gpuspyd_and_gpuspy_link(self):
        tool("dpkg")
        tool("objdump")
        runtime = set(stage_packages(1)) | BASE_IMAGE_PACKAGES
        for var in ("GPUSPYD_BIN", "GPUSPY_BIN"):
            exe = binary(var)
            needed = re.findall(r"NEEDED\s+(\S+)", subprocess.run(["objdump", "-p", exe], capture_output=True,
                                                                  text=True, check=True).stdout)
            ldd = subprocess.run(["ldd", exe], capture_output=True, text=True, check=True).stdout
            resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", ldd, re.M))
            # The dynamic loader is listed by its path alone (NEEDED when the binary uses
            # __tls_get_addr, i.e. thread_local in position-independent code): it is libc6's.
            for path in re.findall(r"^\s*(/\S+) \(0x", ldd, re.M):
                resolved.setdefault(os.path.basename(path), path)
            self.assertIn("libgrpc++.so.1.51", needed)
            owners = self._owners([resolved[s] for s in needed])
            for soname in needed:
                pkg = owners.get(resolved[soname])
                self.assertIsNotNone(pkg, f"{soname} ({resolved[soname]}) belongs to no Debian package")
                self.assertIn(pkg, runtime, f"{os.path.basename(exe)} needs {soname} from {pkg}, "
                                            f"missing from the runtime stage's apt-get install")

    @staticmethod
    def _owners(paths):
        """path -> Debian package, asking dpkg once. usrmerge: dpkg may know a file under /lib
        or under /usr/lib, through a symlink or not."""
        variants = {}
        for path in paths:
            real = os.path.realpath(path)
            for v in (path, real, "/usr" + path, "/usr" + real, path.removeprefix("/usr"), real.removeprefix("/usr")):
                variants.setdefault(v, path)
        out = subprocess.run(["dpkg", "-S", *variants], capture_output=True, text=True).stdout
        owners = {}
        for line in out.splitlines():
            pkg, _, file = line.partition(": ")
            if file in variants:
                owners.setdefault(variants[file], pkg.split(":")[0])
        return owners


class ImageStepsTest(TempDirTest):
    """What the Dockerfile's RUN steps do, done here on this build tree."""

    def test_install_then_bundle_makes_the_core_self_contained(self):
        tool("patchelf")
        prefix = installed_prefix(self.tmp)
        for path in ["bin/gpuspyd", "bin/gpuspy", "lib/libgpuspy.so", "lib/libgpuspy_inject.so",
                     "lib/libgpuspy_core.so"]:
            self.assertTrue(os.path.isfile(os.path.join(prefix, path)), path)
        lib = os.path.join(prefix, "lib")
        r = subprocess.run([deploy_path("docker", "bundle-inject-deps.sh"), lib], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"needs GLIBC_2\.\d+ and GLIBCXX_3\.4\.\d+ or newer")
        deps = os.path.join(lib, "gpuspy-deps")
        # Every library the core needs, directly or not, resolves inside the bundle, except
        # glibc and the C++ runtime, which must be the job's own.
        ldd = subprocess.run(["ldd", os.path.join(lib, "libgpuspy_core.so")], capture_output=True,
                             text=True, check=True).stdout
        resolved = re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M)
        self.assertGreater(len(resolved), 20, ldd)
        for soname, path in resolved:
            if soname.startswith(NOT_BUNDLED):
                self.assertFalse(path.startswith(deps), soname)
            else:
                self.assertEqual(os.path.dirname(path), deps, f"{soname} resolves outside the bundle:\n{ldd}")
        for name in os.listdir(deps):
            rpath = subprocess.run(["patchelf", "--print-rpath", os.path.join(deps, name)], capture_output=True,
                                   text=True, check=True).stdout.strip()
            self.assertEqual(rpath, "$ORIGIN", name)
        # The shim and the stub stay libc-only: nothing to bundle for them.
        for name in ("libgpuspy.so", "libgpuspy_inject.so"):
            out = subprocess.run(["objdump", "-p", os.path.join(lib, name)], capture_output=True, text=True).stdout
            self.assertTrue(set(re.findall(r"NEEDED\s+(\S+)", out)) <= {"libc.so.6", "libdl.so.2", "libpthread.so.0"},
                            out)

    def test_publishing_the_library_never_rewrites_a_file_in_place(self):
        prefix = installed_prefix(self.tmp)
        src = os.path.join(prefix, "lib")
        dest = os.path.join(self.tmp, "run-gpuspy")
        publish = deploy_path("docker", "install-inject-lib.sh")
        subprocess.run([publish, src, dest], check=True, capture_output=True)
        first = os.path.realpath(os.path.join(dest, "lib"))
        # A running job has the library open (mapped); a second publish (an upgrade) must leave
        # that file intact and switch new processes over.
        with open(os.path.join(dest, "lib", "libgpuspy_core.so"), "rb") as held:
            before = os.fstat(held.fileno()).st_size
            subprocess.run([publish, src, dest], check=True, capture_output=True)
            self.assertEqual(len(held.read()), before)
        second = os.path.realpath(os.path.join(dest, "lib"))
        self.assertNotEqual(first, second)
        self.assertFalse(os.path.exists(first), "the previous copy is unlinked")
        self.assertTrue(os.path.islink(os.path.join(dest, "lib")))
        for name in ("libgpuspy.so", "libgpuspy_inject.so", "libgpuspy_core.so"):
            self.assertTrue(os.path.isfile(os.path.join(dest, "lib", name)), name)
        self.assertEqual([n for n in os.listdir(dest) if n.startswith(".lib-")], [os.path.basename(second)])

    def test_default_command_and_healthcheck_work(self):
        ins = instructions()
        cmd = exec_form([t for s, w, t in ins if s == 1 and w == "CMD"][0])
        self.assertLessEqual(set(flags_in(cmd)), gpuspyd_flags())
        health = [t for s, w, t in ins if s == 1 and w == "HEALTHCHECK"][0]
        health_cmd = exec_form(health.split(" CMD ", 1)[1])
        env = {k: v for s, w, t in ins if s == 1 and w == "ENV"
               for k, v in re.findall(r"(\w+)=(\S+)", t)}
        # The image's command on free ports of every interface (gpuspyd accepts that only because
        # the command names a token file), with the secret mounted where the image expects it.
        secret = env["GPUSPY_TOKEN_FILE"]
        self.assertEqual(cmd[cmd.index("--token-file") + 1], secret)
        token = os.path.join(self.tmp, "gpuspy-token")
        with open(token, "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        os.chmod(token, 0o600)
        grpc, http = free_port(), free_port()
        args = [a.replace("0.0.0.0:7070", f"0.0.0.0:{grpc}").replace("0.0.0.0:7071", f"0.0.0.0:{http}")
                .replace("/var/lib/gpuspy", os.path.join(self.tmp, "data")).replace(secret, token) for a in cmd]
        d = self.daemon([binary("GPUSPYD_BIN"), *args], "image")
        self.assertEqual(env["GPUSPY_COLLECTOR"], "127.0.0.1:7070")
        image_env = {**os.environ, "GPUSPY_COLLECTOR": f"127.0.0.1:{grpc}", "GPUSPY_TOKEN_FILE": token}
        wait_healthy(d, f"127.0.0.1:{grpc}", env=image_env)
        self.assertEqual(health_cmd[0], "gpuspy")
        r = subprocess.run([binary("GPUSPY_BIN"), *health_cmd[1:]], capture_output=True, text=True,
                           env=image_env, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        # Without the secret, the image's command exits at once and says why.
        missing = [a.replace("0.0.0.0:7070", f"0.0.0.0:{free_port()}").replace("0.0.0.0:7071", f"0.0.0.0:{free_port()}")
                   .replace("/var/lib/gpuspy", os.path.join(self.tmp, "data2")).replace(secret, os.path.join(self.tmp, "absent"))
                   for a in cmd]
        r = subprocess.run([binary("GPUSPYD_BIN"), *missing], capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("token", r.stderr.lower())


if __name__ == "__main__":
    unittest.main()
