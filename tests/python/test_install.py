#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pip install of the package (python, pyproject.toml) into a virtual
environment that sees the system's torch, as users install it next to their
PyTorch; then, from elsewhere and without PYTHONPATH: the package imports from
the environment, finds libnetreduce.so as an installed library (the dynamic
linker's path) or by NETREDUCE_LIB, says what to do when it finds neither, and
an all-reduce goes through it.  The package's version is meson's."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))

RUN = r"""
import datetime, socket, sys, torch, torch.distributed as dist
import netreduce, netreduce.torch
assert netreduce.__file__.startswith(sys.argv[1]), netreduce.__file__
s = socket.socket(); s.bind(("", 0)); port = s.getsockname()[1]; s.close()  # free on every address: the store binds them all
dist.init_process_group("netreduce", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
t = torch.ones(256)
dist.all_reduce(t)
st = netreduce.torch.stats()
assert st["library"]["ring_calls"] == 1 and st["library"]["ring_bytes"] == 1024, st
print("OK", netreduce.__file__)
dist.destroy_process_group()
"""


def sh(cmd, env, cwd, check=True):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if check and p.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout}")
        sys.exit(1)
    return p


def main():
    try:
        import ensurepip  # noqa: F401 - python3-venv brings it
        import setuptools  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {e.name} is not installed (apt-get install python3-venv python3-setuptools "
              "python3-wheel python3-torch)")
        return 77
    lib = os.environ.get("NETREDUCE_LIB")
    if not lib or not os.path.exists(lib):
        print("SKIP: NETREDUCE_LIB does not name the built libnetreduce.so")
        return 77
    # the tools run without the sanitizer runtime the test's own python may preload
    plain = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "NETREDUCE_LIB", "LD_PRELOAD", "ASAN_OPTIONS")}
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")   # pip builds in place: not in the checkout
        shutil.copytree(os.path.join(top, "python"), src,
                        ignore=shutil.ignore_patterns("__pycache__", "meson.build"))
        venv = os.path.join(tmp, "venv")
        sh([sys.executable, "-m", "venv", "--system-site-packages", venv], plain, tmp)
        py = os.path.join(venv, "bin", "python")
        sh([py, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-index",
            "--no-deps", src], plain, tmp)
        shown = sh([py, "-m", "pip", "show", "netreduce"], plain, tmp).stdout
        version = re.search(r"^Version: (\S+)", shown, re.M)[1]
        meson = re.search(r"version: '([^']+)'", open(os.path.join(top, "meson.build")).read())[1]
        if version != meson:
            print(f"FAIL: pyproject.toml says {version}, meson.build {meson}")
            return 1
        site = os.path.join(venv, "lib")
        # (meson test puts the built library's folder in LD_LIBRARY_PATH: not here)
        run_env = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONPATH", "NETREDUCE_LIB", "LD_LIBRARY_PATH")}
        run_env["GLOO_SOCKET_IFNAME"] = "lo"
        for k in [k for k in run_env if k.startswith("NR_")]:
            del run_env[k]
        # 1. installed: the dynamic linker finds it (here through LD_LIBRARY_PATH)
        env = dict(run_env, LD_LIBRARY_PATH=os.path.dirname(lib))
        print(sh([py, "-c", RUN, site], env, tmp).stdout.strip().splitlines()[-1])
        # 2. by NETREDUCE_LIB
        env = dict(run_env, NETREDUCE_LIB=lib)
        print(sh([py, "-c", RUN, site], env, tmp).stdout.strip().splitlines()[-1])
        # 3. neither: a clear error at init_process_group
        p = sh([py, "-c", RUN, site], dict(run_env), tmp, check=False)
        if p.returncode == 0 or "libnetreduce.so not found: install it" not in p.stdout or \
                "NETREDUCE_LIB" not in p.stdout:
            print(f"FAIL: without the library, expected the 'not found' error, got "
                  f"exit {p.returncode}:\n{p.stdout}")
            return 1
        print("no library: " + p.stdout.strip().splitlines()[-1])
    print(f"PASS: pip install of netreduce {version} into a virtual environment: found the "
          "library installed and by NETREDUCE_LIB, all-reduce through it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
