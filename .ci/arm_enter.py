#!/usr/bin/env python3
"""Run a command inside a foreign-architecture root, as its root user.

Usage: arm_enter.py ROOT ARCH [--] COMMAND...   (ARCH: arm64 or armhf)

The host's binfmt_misc registrations are left alone: the process moves into a new
user + mount + PID namespace (uids/gids 0..65535 mapped 1:1 by a helper process that
stays in the parent namespace), mounts a private binfmt_misc there (Linux >= 6.7 gives
each user namespace its own), registers qemu-user-static's interpreter from
/usr/lib/binfmt.d with the F flag (the interpreter is opened now, so it need not exist
inside ROOT), binds /dev and /sys into ROOT, mounts a fresh /proc and chroots.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
QEMU = {"arm64": "qemu-aarch64", "armhf": "qemu-arm"}
IDS = 65536


def _unshare(flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def _enter_user_namespace() -> None:
    """unshare(NEWUSER|NEWNS|NEWPID) with ids mapped 1:1 by a helper in the parent namespace."""
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    me = os.getpid()
    helper = os.fork()
    if helper == 0:
        # The helper keeps the parent namespace's privileges, which writing the maps needs.
        os.close(ready_w)
        os.close(done_r)
        os.read(ready_r, 1)
        status = 0
        try:
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{me}/{name}", "w") as f:
                    f.write(f"0 0 {IDS}\n")
        except OSError as e:
            print(f"arm_enter: writing the id maps: {e}", file=sys.stderr)
            status = 1
        os.write(done_w, b"x")
        os._exit(status)
    os.close(ready_r)
    os.close(done_w)
    _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID)
    os.write(ready_w, b"x")
    os.read(done_r, 1)
    _, status = os.waitpid(helper, 0)
    if status != 0:
        sys.exit(1)
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True)


def _inside(root: str, arch: str, command: list[str]) -> int:
    """In the new namespaces (as PID 1): mounts, binfmt registration, chroot, exec."""
    _run("mount", "--make-rprivate", "/")
    binfmt = tempfile.mkdtemp(prefix="fbgfx-binfmt-")
    _run("mount", "-t", "binfmt_misc", "binfmt_misc", binfmt)
    with open(f"/usr/lib/binfmt.d/{QEMU[arch]}.conf") as f:
        rule = f.read().strip()
    with open(os.path.join(binfmt, "register"), "w") as f:
        f.write(rule)
    for d in ("dev", "sys"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
        _run("mount", "--rbind", f"/{d}", os.path.join(root, d))
    proc = os.path.join(root, "proc")
    if os.path.islink(proc):
        os.unlink(proc)
    os.makedirs(proc, exist_ok=True)
    _run("mount", "-t", "proc", "proc", proc)
    os.chroot(root)
    os.chdir("/")
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "DEBIAN_FRONTEND": "noninteractive",
    }
    for name in ("PIP_CERT", "PIP_NO_CACHE_DIR", "PIP_DISABLE_PIP_VERSION_CHECK"):
        if name in os.environ:
            env[name] = os.environ[name]
    # Stay PID 1 of the new PID namespace (its end would kill the command): run, reap, return.
    return subprocess.run(command, env=env).returncode


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] not in QEMU:
        print(__doc__, file=sys.stderr)
        return 2
    root, arch, command = os.path.abspath(args[0]), args[1], args[2:]
    if command[0] == "--":
        command = command[1:]
    _enter_user_namespace()
    # The first child of unshare(CLONE_NEWPID) becomes PID 1 of the new namespace.
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(_inside(root, arch, command))
        except BaseException as e:  # noqa: BLE001 - report and fail, never fall back to the host
            print(f"arm_enter: {e}", file=sys.stderr)
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
