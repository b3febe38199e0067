"""`rag ingest --engine ray` with a Ray of its own, as a user runs it: no socket beyond the loopback
address from any process Ray starts, no usage report, nothing of Ray's on the terminal; a killed
embedding actor and Ctrl-C on the driver are one raggity line, a non-zero exit, the lease released
and the index as it was.

The socket audit is a `sitecustomize` on PYTHONPATH, which every Python process Ray starts (its head
and agent processes, every worker) imports: an audit hook records each connect, sendto and name
lookup whose address is not the loopback one or a Unix socket. Ray's C++ parts are not Python; their
node-address probe (a UDP connect towards 8.8.8.8) is checked by where it shows: the node address Ray
picked, and its "external connectivity" log line."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from raggity.store.object_commit import LEASE, current_commit
from raggity.store.object_store import S3Objects
from raggity.store.uri import IndexLocation
from tests.scale.conftest import FAKE_CREDENTIALS, S3Server
from tests.support import CHECKOUT, RAG, interruptible, write_config, write_corpus

AUDIT = textwrap.dedent(
    """
    import os, socket, sys

    _OUT = os.environ.get("RAGGITY_TEST_SOCKET_AUDIT")
    _LOCAL = {"127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1", None, ""}

    def _note(kind, what):
        with open(os.path.join(_OUT, f"{kind}-{os.getpid()}"), "a", encoding="utf-8") as out:
            out.write(what + "\\n")

    def _hook(event, args):
        if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
            sock, address = args[0], args[-1]
            if getattr(sock, "family", None) == socket.AF_UNIX or not isinstance(address, tuple):
                return
            if address[0] not in _LOCAL:
                _note("outside", f"{event} {address!r} {sys.argv[:2]!r}")
        elif event == "socket.getaddrinfo" and args[0] not in _LOCAL:
            _note("outside", f"{event} {args[0]!r} {sys.argv[:2]!r}")

    if _OUT:
        _note("started", repr(sys.argv[:2]))
        sys.addaudithook(_hook)
    """
)


@pytest.fixture(autouse=True)
def _short_tmp(tmp_path: Path) -> Iterator[None]:
    """tmp_path/tmp: a short folder (Ray's Unix sockets live below the ingest's Ray folder, and a
    socket path may not exceed 107 bytes), removed with the Ray logs in it after the test."""
    short = Path(tempfile.mkdtemp(prefix="rgt-", dir="/tmp"))
    (tmp_path / "tmp").symlink_to(short)
    yield
    shutil.rmtree(short, ignore_errors=True)


def _tracer() -> str | None:
    """strace, where it is installed and may trace (a container without ptrace refuses it)."""
    found = shutil.which("strace")
    if found is None:
        return None
    probe = subprocess.run([found, "-f", "-qq", "-o", os.devnull, "true"], capture_output=True, check=False)
    return found if probe.returncode == 0 else None


def _project(s3: S3Server, root: Path, copies: int = 0) -> tuple[Path, IndexLocation]:
    write_corpus(root / "docs")
    for n in range(copies):  # more work for the stages, so that a signal lands while they run
        shutil.copy(CHECKOUT / "docs" / "scaling.md", root / "docs" / f"scaling-{n}.md")
    location = IndexLocation(s3.prefix(), s3.storage_options)
    config = write_config(
        root,
        index={"path": location.uri, "storage": s3.storage_options},
        ingest={"chunk_tokens": 64, "parent_tokens": 256},
    )
    return config, location


def _env(root: Path, audit: Path | None = None) -> dict[str, str]:
    """This checkout first on PYTHONPATH (with the audit hook's folder when asked), a HOME and a
    TMPDIR of the test's own (the ingest's Ray folder lands in TMPDIR: a short path, as Ray's Unix
    sockets live below it), no $RAY_ADDRESS."""
    (root / "home").mkdir(exist_ok=True)
    paths = [str(CHECKOUT)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(FAKE_CREDENTIALS, HOME=str(root / "home"), TMPDIR=str((root / "tmp").resolve()))
    if audit is not None:
        hook = root / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(AUDIT, encoding="utf-8")
        audit.mkdir()
        paths.insert(0, str(hook))
        env["RAGGITY_TEST_SOCKET_AUDIT"] = str(audit)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def _ray_folder(root: Path) -> Path:
    [folder] = (root / "tmp").glob("raggity-ray-*")
    return folder


def test_a_ray_ingest_opens_no_socket_beyond_loopback_and_says_nothing_of_rays(
    s3: S3Server, tmp_path: Path
) -> None:
    """Before: Ray picked the node address by a UDP connect to 8.8.8.8:53 (and said so offline:
    "Failed to determine local IP via external connectivity"), its head process asked the cloud
    metadata address which cloud it ran on, usage statistics were left on, and Ray wrote
    ~/.ray/auth_token and warned about it on the terminal."""
    config, location = _project(s3, tmp_path)
    audit = tmp_path / "audit"
    env = _env(tmp_path, audit)
    command = [str(RAG), "--config", str(config), "ingest", "docs", "--engine", "ray"]
    trace = tmp_path / "strace.txt"
    tracer = _tracer()
    if tracer is not None:  # also every socket of the C++ parts and of onnxruntime's threads
        command = [tracer, "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace), *command]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr
    if tracer is not None:
        addresses = re.findall(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"', trace.read_text())
        addresses = [v4 or v6 for v4, v6 in addresses]
        assert addresses, "strace saw no socket at all"
        assert {a for a in addresses if a not in ("127.0.0.1", "::1", "::ffff:127.0.0.1")} == set()
    assert "added" in done.stdout
    assert current_commit(S3Objects(location)) is not None

    outside = {p.name: p.read_text(encoding="utf-8") for p in audit.glob("outside-*")}
    assert outside == {}
    started = " ".join(p.read_text(encoding="utf-8") for p in audit.glob("started-*"))
    # The hook ran where the probes were: Ray's head process (the usage-statistics module) and workers.
    assert "dashboard.py" in started
    assert "default_worker.py" in started

    folder = _ray_folder(tmp_path)
    driver_log = (folder / "ray-driver.log").read_text(encoding="utf-8")
    assert "Ray on this machine, node address 127.0.0.1" in driver_log
    for log in folder.rglob("*"):
        if log.is_file() and log.name != "auth_token":
            assert b"external connectivity" not in log.read_bytes(), log
    [dashboard] = folder.rglob("dashboard.log")
    assert "Usage reporting is disabled." in dashboard.read_text(encoding="utf-8")
    assert not (tmp_path / "home" / ".ray").exists()  # no token, no config written into HOME


def _run_until(config: Path, root: Path, ready: Callable[[], bool]) -> tuple[subprocess.Popen[str], float]:
    proc = interruptible(
        [str(RAG), "--config", str(config), "ingest", "docs", "--engine", "ray", "--rebuild"],
        cwd=root,
        env=_env(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 400
    while proc.poll() is None and not ready():
        assert time.monotonic() < deadline, "the Ray stages never started"
        time.sleep(0.3)
    return proc, time.monotonic()


def _actors(name: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        with_name = " ".join(proc.info["cmdline"] or [])
        if name in with_name and "pytest" not in with_name:
            found.append(proc)
    return found


def _first_ingest(s3: S3Server, root: Path) -> tuple[Path, IndexLocation, S3Objects, object]:
    config, location = _project(s3, root, copies=6)
    first = subprocess.run(
        [str(RAG), "--config", str(config), "ingest", "docs"],
        cwd=root,
        env=_env(root),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    objects = S3Objects(location)
    return config, location, objects, current_commit(objects)


def test_a_killed_embedding_actor_is_one_line_and_leaves_the_index_as_it_was(
    s3: S3Server, tmp_path: Path
) -> None:
    """Before: three Ray tracebacks and a "(raylet)" line came before raggity's one line."""
    config, _, objects, before = _first_ingest(s3, tmp_path)
    proc, _ = _run_until(config, tmp_path, lambda: bool(_actors("EmbedChunks")))
    for actor in _actors("EmbedChunks"):
        actor.kill()
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode not in (0, 70), stderr
    assert "Traceback" not in stderr + stdout
    assert "(raylet)" not in stderr + stdout
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: the Ray ingest failed: "), stderr
    assert all(line.startswith("  fix: ") for line in lines[1:]), stderr
    assert len(lines) <= 2, stderr
    assert objects.get(LEASE) is None
    assert current_commit(objects) == before


def test_ctrl_c_on_the_ray_driver_stops_the_ingest_in_one_line(s3: S3Server, tmp_path: Path) -> None:
    """The driver leaves with the interrupt's code while Ray Data's executor still runs in its thread."""
    config, _, objects, before = _first_ingest(s3, tmp_path)
    proc, _ = _run_until(config, tmp_path, lambda: bool(_actors("EmbedChunks")))
    folder = _ray_folder(tmp_path).name
    assert _actors(folder)  # Ray's processes name the ingest's Ray folder
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert [line for line in stderr.splitlines() if line.strip()] == [
        "interrupted; the index keeps everything committed so far"
    ]
    assert "Traceback" not in stdout
    assert objects.get(LEASE) is None  # released: the next writer need not wait
    assert current_commit(objects) == before
    # Before: Ray's exit handler shut Ray down under the running executor, whose next call started a
    # second Ray with default settings (in TMPDIR/ray), and the driver exited 1 now and then.
    assert not (tmp_path / "tmp" / "ray").exists()
    # Ray's processes (started by the driver) die with it: none of this ingest's is left.
    deadline = time.monotonic() + 60
    while _actors(folder) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _actors(folder) == []


def test_a_ray_call_after_raggitys_ray_is_gone_starts_no_ray(tmp_path: Path) -> None:
    """Ray starts a Ray with default settings for any call made while none is connected (what the
    executor of a stopped ingest did); in a process that connected raggity's Ray it fails instead."""
    script = textwrap.dedent(
        """
        import ray
        from raggity.pipeline.ingest.ray_local import _no_auto_init
        _no_auto_init()
        try:
            ray.put(1)
        except Exception as exc:
            print("refused:", type(exc).__name__)
        """
    )
    env = dict(_env(tmp_path), RAY_USAGE_STATS_ENABLED="0")
    done = subprocess.run(
        [str(Path(RAG).parent / "python"), "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.stdout.startswith("refused:"), done.stdout + done.stderr
    assert not (tmp_path / "tmp" / "ray").exists()
