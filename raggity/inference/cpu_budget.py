"""How many threads the process may keep busy: the CPUs it may be scheduled on (affinity), capped by
its cgroup CPU quota (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`).

`os.cpu_count()` counts the machine's CPUs. In a container limited to 1.5 CPUs on a 16-core host,
or under `taskset -c 0`, it says 16, and 16 threads that meet at a barrier at every step of a model
wait for each other most of the time. The functions take the files to read as paths so that tests
can hand them fake ones.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath

PROC_MOUNTINFO = Path("/proc/self/mountinfo")
PROC_CGROUP = Path("/proc/self/cgroup")


@dataclass(frozen=True)
class CpuBudget:
    threads: int  # the threads to run: affinity capped by the quota, at least 1
    affinity: int  # CPUs the process may be scheduled on
    quota: float | None  # CPUs' worth of time the cgroup allows per period; None: no limit

    def describe(self) -> str:
        limit = "no cgroup CPU limit" if self.quota is None else f"cgroup CPU limit {self.quota:g}"
        return f"{self.affinity} usable CPUs, {limit}"


def budget(affinity: int, quota: float | None) -> CpuBudget:
    """A quota below one CPU still needs one thread; a fractional quota rounds down, because a
    thread more than the quota pays for is throttled in the middle of its work."""
    threads = affinity if quota is None else min(affinity, math.floor(quota))
    return CpuBudget(max(1, threads), affinity, quota)


def cgroup_cpu_quota(mountinfo: Path = PROC_MOUNTINFO, cgroup: Path = PROC_CGROUP) -> float | None:
    """The tightest CPU quota on this process's cgroup or any of its ancestors (v1 or v2), in CPUs;
    None when there is none or the files cannot be read (not Linux, no cgroup fs mounted)."""
    try:
        mounts = mountinfo.read_text(encoding="utf-8", errors="replace")
        groups = cgroup.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    v2_path, v1_path = _own_groups(groups)
    limits: list[float] = []
    for fstype, root, mount_point, options in _cgroup_mounts(mounts):
        if fstype == "cgroup2" and v2_path is not None:
            limits += _walk(mount_point, root, v2_path, _v2_limit)
        elif fstype == "cgroup" and v1_path is not None and "cpu" in options:
            limits += _walk(mount_point, root, v1_path, _v1_limit)
    return min(limits) if limits else None


@cache
def process_budget() -> CpuBudget:
    """This process's budget, read once (affinity and quotas do not change under a running ask)."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows have no sched_getaffinity
        affinity = os.cpu_count() or 1
    return budget(affinity, cgroup_cpu_quota())


def threads_to_use(configured: int) -> int:
    """The configured thread count, or the process's budget when it is 0 (auto)."""
    return configured or process_budget().threads


def _own_groups(text: str) -> tuple[str | None, str | None]:
    """This process's cgroup v2 path and its v1 `cpu` controller path, from /proc/self/cgroup."""
    v2: str | None = None
    v1: str | None = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _cgroup_mounts(text: str) -> list[tuple[str, str, Path, set[str]]]:
    """(fstype, root inside the hierarchy, mount point, super options) of each cgroup mount."""
    mounts: list[tuple[str, str, Path, set[str]]] = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        mounts.append((tail[0], _unescape(fields[3]), Path(_unescape(fields[4])), set(tail[2].split(","))))
    return mounts


def _unescape(field: str) -> str:
    # mountinfo writes a space, tab, newline or backslash in a path as an octal escape.
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def _walk(mount_point: Path, root: str, path: str, limit_of: Callable[[Path], float | None]) -> list[float]:
    """The limits found in the process's group folder under this mount and each parent up to the
    mount point. A group outside the mounted subtree (another namespace) is not visible here."""
    group, mount_root = PurePosixPath(path), PurePosixPath(root)
    if group != mount_root and mount_root not in group.parents:
        return []
    folder = mount_point / group.relative_to(mount_root)
    limits: list[float] = []
    while True:
        found = limit_of(folder)
        if found is not None:
            limits.append(found)
        if folder in (mount_point, folder.parent):
            return limits
        folder = folder.parent


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def _v2_limit(folder: Path) -> float | None:
    """`cpu.max` is "QUOTA PERIOD" in microseconds, or "max PERIOD" for no limit."""
    text = _read(folder / "cpu.max")
    if text is None:
        return None
    parts = text.split()
    return _ratio(parts[0], parts[1]) if len(parts) == 2 else None


def _v1_limit(folder: Path) -> float | None:
    """`cpu.cfs_quota_us` is -1 for no limit."""
    quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
    return None if quota is None or period is None else _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:  # "max"
        return None
    return q / p if q > 0 and p > 0 else None
