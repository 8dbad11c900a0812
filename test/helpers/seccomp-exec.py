"""Runs a command under a seccomp profile in Docker's JSON format, as Docker would apply it.

    /usr/bin/python3 seccomp-exec.py PROFILE|unconfined UID GID PROGRAM [ARG...]

Debian's python3-seccomp is libseccomp's own binding, the library runc loads profiles with
(through libseccomp-golang). The profile is read the way moby reads it
(moby/profiles seccomp/seccomp_linux.go, setupSeccomp): the native architecture's entry of
`archMap` with its sub-architectures (or `architectures`), each rule kept or dropped by its
`includes`/`excludes` (arches, caps, minKernel) for this machine and a container with no
capability (compose's `cap_drop: [ALL]`). It is then loaded the way runc does
(libcontainer/seccomp/seccomp_linux.go, InitSeccomp and matchCall): the default action and its
errno, a rule whose action is the default's skipped, a name this libseccomp does not know skipped,
conditions on distinct arguments ANDed in one rule and conditions repeating an argument one rule
each. As with `no-new-privileges`, the process drops to UID/GID with no groups and sets
no_new_privs, loads the filter, then execs PROGRAM with every descriptor it inherited.

What runc adds and this does not: its -ENOSYS stub for syscalls newer than any the profile names
(patchbpf). Here such a call gets the default action (EPERM), which is stricter, never looser.
"""

import ctypes
import json
import os
import platform
import sys

import seccomp

# uname -m => moby's libseccomp name (goToNative) => its SCMP_ARCH name (nativeToSeccomp).
NATIVE = {
    "x86_64": ("amd64", "SCMP_ARCH_X86_64"),
    "aarch64": ("arm64", "SCMP_ARCH_AARCH64"),
    "i686": ("x86", "SCMP_ARCH_X86"),
    "armv7l": ("arm", "SCMP_ARCH_ARM"),
    "ppc64le": ("ppc64le", "SCMP_ARCH_PPC64LE"),
    "s390x": ("s390x", "SCMP_ARCH_S390X"),
    "riscv64": ("riscv64", "SCMP_ARCH_RISCV64"),
}

OPERATORS = {
    "SCMP_CMP_NE": seccomp.NE,
    "SCMP_CMP_LT": seccomp.LT,
    "SCMP_CMP_LE": seccomp.LE,
    "SCMP_CMP_EQ": seccomp.EQ,
    "SCMP_CMP_GE": seccomp.GE,
    "SCMP_CMP_GT": seccomp.GT,
    "SCMP_CMP_MASKED_EQ": seccomp.MASKED_EQ,
}


def action(name, errno_ret):
    """runc's getAction: ERRNO and TRACE default to EPERM; KILL is KILL_THREAD."""
    if name in ("SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD"):
        return seccomp.KILL
    if name == "SCMP_ACT_KILL_PROCESS":
        return seccomp.KILL_PROCESS
    if name == "SCMP_ACT_ERRNO":
        return seccomp.ERRNO(1 if errno_ret is None else errno_ret)
    if name == "SCMP_ACT_TRACE":
        return seccomp.TRACE(1 if errno_ret is None else errno_ret)
    if name == "SCMP_ACT_TRAP":
        return seccomp.TRAP
    if name == "SCMP_ACT_ALLOW":
        return seccomp.ALLOW
    if name == "SCMP_ACT_LOG":
        return seccomp.LOG
    raise SystemExit(f"seccomp-exec: action {name} is not supported here")


def arch_of(name):
    return getattr(seccomp.Arch, name[len("SCMP_ARCH_"):])


def kernel_at_least(version):
    """moby's kernelGreaterEqualThan: kernel and major revision only."""
    want = tuple(int(part) for part in version.split("."))
    have = tuple(int(part) for part in platform.release().split("-")[0].split(".")[:2])
    return have >= want


def applies(rule, arch, caps):
    """moby's setupSeccomp filter: excludes first, then includes."""
    excludes = rule.get("excludes") or {}
    if arch in (excludes.get("arches") or []):
        return False
    if any(cap in caps for cap in excludes.get("caps") or []):
        return False
    if excludes.get("minKernel") and kernel_at_least(excludes["minKernel"]):
        return False
    includes = rule.get("includes") or {}
    if includes.get("arches") and arch not in includes["arches"]:
        return False
    if any(cap not in caps for cap in includes.get("caps") or []):
        return False
    if includes.get("minKernel") and not kernel_at_least(includes["minKernel"]):
        return False
    return True


def build(profile, caps):
    arch, native = NATIVE[platform.machine()]
    default = action(profile["defaultAction"], profile.get("defaultErrnoRet"))
    syscall_filter = seccomp.SyscallFilter(default)
    arches = list(profile.get("architectures") or [])
    for entry in profile.get("archMap") or []:
        if entry["architecture"] == native:
            arches += [entry["architecture"], *(entry.get("subArchitectures") or [])]
    for name in arches:
        if not syscall_filter.exist_arch(arch_of(name)):
            syscall_filter.add_arch(arch_of(name))
    for rule in profile["syscalls"]:
        if not applies(rule, arch, caps):
            continue
        rule_action = action(rule["action"], rule.get("errnoRet"))
        if rule_action == default:
            continue
        conditions = [
            seccomp.Arg(arg["index"], OPERATORS[arg["op"]], arg["value"], arg.get("valueTwo", 0))
            for arg in rule.get("args") or []
        ]
        indexes = [arg["index"] for arg in rule.get("args") or []]
        # runc: two conditions on one argument cannot be ANDed, so each becomes a rule of its own.
        groups = [[condition] for condition in conditions] if len(set(indexes)) < len(indexes) else [conditions]
        for name in rule.get("names") or [rule["name"]]:
            # libseccomp-golang's GetSyscallFromName: __NR_SCMP_ERROR (-1) is a name it does not know.
            if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) == -1:
                continue
            for group in groups:
                try:
                    syscall_filter.add_rule(rule_action, name, *group)
                except RuntimeError as error:
                    raise SystemExit(f"seccomp-exec: {name}: {error}")
    return syscall_filter


def main():
    profile_path, uid, gid, *command = sys.argv[1:]
    syscall_filter = None
    if profile_path != "unconfined":
        with open(profile_path, encoding="utf-8") as file:
            syscall_filter = build(json.load(file), caps=set())
    os.setgroups([])
    os.setgid(int(gid))
    os.setuid(int(uid))
    if syscall_filter is None:
        # compose's seccomp=unconfined with no-new-privileges: the control.
        PR_SET_NO_NEW_PRIVS = 38
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    else:
        syscall_filter.set_attr(seccomp.Attr.CTL_NNP, 1)
        syscall_filter.load()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
