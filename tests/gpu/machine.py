"""What the GPU suite needs to know about the machine and gpuspy's binaries: where gpuspyd,
gpuspy and the injection libraries are (a build dir or a pack.sh output), which shared libraries
the system already has, where CUPTI is, and the GPU/driver/software versions for the results.
"""
import glob
import os
import platform
import re
import site
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class SetupError(Exception):
    """The suite cannot run at all here (exit status 2)."""

# Libraries every Linux has, never packed and never preferred over the system's (pack.sh).
SYSTEM_LIBS = re.compile(r"^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|"
                         r"librt\.so|libutil\.so|libresolv\.so|libstdc\+\+\.so|libgcc_s\.so)")


class Binaries:
    """gpuspyd, gpuspy and the three injection libraries, from a build dir or a pack.sh dir."""

    def __init__(self, root):
        root = os.path.abspath(root)
        self.root = root
        if os.path.isfile(os.path.join(root, "bin", "gpuspyd")):  # pack.sh layout
            self.gpuspyd = os.path.join(root, "bin", "gpuspyd")
            self.gpuspy = os.path.join(root, "bin", "gpuspy")
            self.lib = os.path.join(root, "lib")
            self.deps = os.path.join(root, "deps")
        else:  # a CMake build directory
            self.gpuspyd = os.path.join(root, "collector", "server", "gpuspyd")
            self.gpuspy = os.path.join(root, "viewer", "cli", "gpuspy")
            self.lib = os.path.join(root, "lib")
            self.deps = None
        self.shim = os.path.join(self.lib, "libgpuspy.so")
        missing = [p for p in (self.gpuspyd, self.gpuspy, self.shim,
                               os.path.join(self.lib, "libgpuspy_inject.so"),
                               os.path.join(self.lib, "libgpuspy_core.so")) if not os.path.isfile(p)]
        if missing:
            raise SetupError(f"{root} lacks {', '.join(missing)} "
                             "(give a build dir or a tests/gpu/pack.sh output)")


def system_sonames():
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {line.split()[0] for line in out.splitlines()[1:] if line.strip()}


def find_cupti():
    """A libcupti.so.13 on this machine (pip wheels beside torch, or the toolkit), for the note
    in the results and as a fallback if the stub cannot find one on its own."""
    roots = []
    try:
        roots += site.getsitepackages()
    except AttributeError:
        pass
    roots.append(site.getusersitepackages())
    candidates = []
    for r in roots:
        candidates += glob.glob(os.path.join(r, "nvidia", "*", "lib", "libcupti.so.13*"))
        candidates += glob.glob(os.path.join(r, "nvidia", "*", "lib", "libcupti.so*"))
    candidates += ["/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                   "/usr/local/cuda/lib64/libcupti.so.13"]
    for c in candidates:
        if os.path.isfile(c):
            return c
    return None


def run_text(cmd, timeout=60, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except (OSError, subprocess.SubprocessError) as e:
        return -1, "", str(e)


def system_info(nvcc, bins):
    info = {}
    rc, out, _ = run_text(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                           "--format=csv,noheader"])
    if rc == 0 and out.strip():
        gpus = [line.strip() for line in out.strip().splitlines()]
        info["gpu"] = f"{len(gpus)} x " + gpus[0].rsplit(",", 2)[0] + \
            f" ({gpus[0].rsplit(',', 1)[1].strip()})"
        info["driver"] = gpus[0].split(",")[1].strip()
    rc, out, _ = run_text(["nvidia-smi"])
    m = re.search(r"CUDA Version:\s*([\d.]+)", out or "")
    if m:
        info["cuda"] = f"driver supports CUDA {m.group(1)}"
    rc, out, err = run_text([sys.executable, "-c",
                             "import torch; print(torch.__version__, torch.version.cuda)"], 120)
    info["torch"] = out.strip() if rc == 0 else \
        f"unavailable ({((err or '').strip().splitlines() or ['?'])[-1][-200:]})"
    rc, out, _ = run_text([sys.executable, "-c", "import triton; print(triton.__version__)"], 120)
    info["triton"] = out.strip() if rc == 0 else "not importable"
    if nvcc:
        rc, out, _ = run_text([nvcc, "--version"])
        m = re.search(r"release ([\d.]+)", out or "")
        info["nvcc"] = m.group(1) if m else "?"
    else:
        info["nvcc"] = "not found"
    manifest = os.path.join(bins.root, "MANIFEST")
    if os.path.isfile(manifest):  # a pack.sh output: the commit it was built from
        with open(manifest) as f:
            m = re.search(r"^gpuspy commit: (\S+)", f.read(), re.M)
        info["gpuspy"] = f"{m.group(1) if m else '?'} (pack.sh output {bins.root})"
    else:
        rc, out, _ = run_text(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
        dirty = run_text(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"])[1]
        info["gpuspy"] = (out.strip() or "?") + (" (+ local changes)" if dirty.strip() else "") \
            + f" (build {bins.root})"
    info["host"] = f"{platform.node()}, {platform.platform()}, {os.cpu_count()} CPUs"
    return info
