"""Threads come from the CPUs the process may use: affinity, capped by a cgroup v1 or v2 quota read
from the files the kernel publishes (fake ones here, laid out as a container or a host has them)."""

from __future__ import annotations

from pathlib import Path

from raggity.inference.cpu_budget import budget, cgroup_cpu_quota, threads_to_use


def _mountinfo(tmp_path: Path, *mounts: str) -> Path:
    """A /proc/self/mountinfo with the given mounts, each "FSTYPE ROOT MOUNT_POINT SUPER_OPTIONS"."""
    lines = ["22 1 0:20 / /proc rw,nosuid - proc proc rw"]
    for number, mount in enumerate(mounts, start=30):
        fstype, root, point, options = mount.split()
        lines.append(f"{number} 25 0:{number} {root} {point} rw,nosuid - {fstype} cgroup {options}")
    path = tmp_path / "mountinfo"
    path.write_text("\n".join(lines) + "\n")
    return path


def _file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _cgroup(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cgroup"
    path.write_text(text)
    return path


def test_a_v2_quota_on_the_own_group_caps_the_cpus(tmp_path: Path) -> None:
    fs = tmp_path / "fs"
    _file(fs / "user.slice" / "job" / "cpu.max", "150000 100000")
    _file(fs / "user.slice" / "cpu.max", "max 100000")
    mounts = _mountinfo(tmp_path, f"cgroup2 / {fs} rw,nsdelegate")
    assert cgroup_cpu_quota(mounts, _cgroup(tmp_path, "0::/user.slice/job\n")) == 1.5


def test_the_tightest_quota_of_the_group_and_its_parents_wins(tmp_path: Path) -> None:
    fs = tmp_path / "fs"
    _file(fs / "a" / "b" / "cpu.max", "400000 100000")
    _file(fs / "a" / "cpu.max", "50000 100000")
    mounts = _mountinfo(tmp_path, f"cgroup2 / {fs} rw")
    assert cgroup_cpu_quota(mounts, _cgroup(tmp_path, "0::/a/b\n")) == 0.5


def test_a_container_sees_its_own_group_at_the_mount_root(tmp_path: Path) -> None:
    """With a cgroup namespace the group path is "/" and the limit sits on the mount point itself."""
    fs = tmp_path / "fs"
    _file(fs / "cpu.max", "200000 100000")
    mounts = _mountinfo(tmp_path, f"cgroup2 / {fs} rw")
    assert cgroup_cpu_quota(mounts, _cgroup(tmp_path, "0::/\n")) == 2.0


def test_a_v1_cfs_quota_is_read_from_the_cpu_controller_mount(tmp_path: Path) -> None:
    cpu = tmp_path / "cpu,cpuacct"
    _file(cpu / "docker" / "abc" / "cpu.cfs_quota_us", "300000")
    _file(cpu / "docker" / "abc" / "cpu.cfs_period_us", "100000")
    memory = tmp_path / "memory"
    _file(memory / "docker" / "abc" / "cpu.cfs_quota_us", "100000")  # not the cpu controller: ignored
    _file(memory / "docker" / "abc" / "cpu.cfs_period_us", "100000")
    mounts = _mountinfo(
        tmp_path,
        f"cgroup / {cpu} rw,cpu,cpuacct",
        f"cgroup / {memory} rw,memory",
        "cgroup2 / /nonexistent rw",
    )
    groups = _cgroup(tmp_path, "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n")
    assert cgroup_cpu_quota(mounts, groups) == 3.0


def test_a_v1_mount_of_a_subtree_maps_the_group_below_its_root(tmp_path: Path) -> None:
    cpu = tmp_path / "cpu"
    _file(cpu / "abc" / "cpu.cfs_quota_us", "100000")
    _file(cpu / "abc" / "cpu.cfs_period_us", "100000")
    mounts = _mountinfo(tmp_path, f"cgroup /docker {cpu} rw,cpu")
    assert cgroup_cpu_quota(mounts, _cgroup(tmp_path, "3:cpu:/docker/abc\n")) == 1.0


def test_no_limit_anywhere_is_none(tmp_path: Path) -> None:
    fs, cpu = tmp_path / "fs", tmp_path / "cpu"
    _file(fs / "cpu.max", "max 100000")
    _file(cpu / "cpu.cfs_quota_us", "-1")
    _file(cpu / "cpu.cfs_period_us", "100000")
    mounts = _mountinfo(tmp_path, f"cgroup2 / {fs} rw", f"cgroup / {cpu} rw,cpu")
    assert cgroup_cpu_quota(mounts, _cgroup(tmp_path, "1:cpu:/\n0::/\n")) is None


def test_missing_files_mean_no_limit(tmp_path: Path) -> None:
    assert cgroup_cpu_quota(tmp_path / "absent", tmp_path / "absent too") is None


def test_a_mount_point_with_a_space_is_unescaped(tmp_path: Path) -> None:
    fs = tmp_path / "cg fs"
    _file(fs / "cpu.max", "100000 100000")
    escaped = str(fs).replace(" ", "\\040")
    mounts = _mountinfo(tmp_path, f"cgroup2 / {escaped} rw")
    assert cgroup_cpu_quota(mounts, _cgroup(tmp_path, "0::/\n")) == 1.0


def test_the_budget_is_affinity_capped_by_the_quota_rounded_down() -> None:
    assert budget(16, None).threads == 16
    assert budget(16, 1.5).threads == 1
    assert budget(2, 4.0).threads == 2
    assert budget(8, 0.2).threads == 1  # a sliver of a CPU still runs one thread


def test_a_configured_thread_count_overrides_the_budget() -> None:
    assert threads_to_use(3) == 3
    assert threads_to_use(0) >= 1
