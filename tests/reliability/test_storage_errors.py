"""Plain storage failures get their own exit code and one line, never "internal error": a full disk,
read-only media (where reading must still work), status during an ingest's file churn, and a rebuild
that queries must mention."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from raggity.api.status import folder_size, index_status
from raggity.cli.errors import GuardedGroup
from raggity.config.loader import load_config
from raggity.core.errors import DiskFullError, IndexLocationError, os_errno, storage_error
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from tests.reliability.helpers import QUERY, RAG, rag, read_state, write_corpus, write_rag_config
from tests.support import assert_clean_error, write_config


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, IndexLayout]:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs", 6)
    done = rag(config, "ingest")
    assert done.returncode == 0, done.stderr
    return config, IndexLayout(tmp_path / ".raggity")


def test_rust_errors_are_read_for_their_os_error() -> None:
    tantivy = ValueError(
        'Failed to acquire Lockfile: IoError(Os { code: 30, kind: ReadOnlyFilesystem, message: "x" }). None'
    )
    lance = RuntimeError(
        "LanceError(IO): Generic LocalFileSystem error: No space left on device (os error 28)"
    )
    assert os_errno(tantivy) == errno.EROFS
    assert os_errno(lance) == errno.ENOSPC
    assert isinstance(storage_error(lance, Path("/i")), DiskFullError)
    assert isinstance(storage_error(tantivy, Path("/i")), IndexLocationError)
    assert storage_error(ValueError("a bug"), Path("/i")) is None


def test_disk_full_during_an_ingest_exits_9_and_keeps_the_index(indexed: tuple[Path, IndexLayout]) -> None:
    config, layout = indexed
    before = read_state(layout.root)
    (config.parent / "docs" / "more.md").write_text(
        "# More\n\nAnother note on maple falcons.\n", encoding="utf-8"
    )
    full = rag(config, "ingest", env={"RAGGITY_FAIL_AT": "lancedb:add:ENOSPC"})
    assert full.returncode == 9, full.stderr
    line = assert_clean_error(full.stderr)
    assert f"{layout.root}: no space left on device" in line
    assert read_state(layout.root).live_ids == before.live_ids
    assert rag(config, "search", QUERY).returncode == 0
    assert rag(config, "ingest").returncode == 0


def tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in root.rglob("*")}


def _ro_bind_works(tmp_path: Path) -> bool:
    """Whether this process may make a read-only bind mount in a private mount namespace."""
    src, dst = tmp_path / "probe-src", tmp_path / "probe-dst"
    src.mkdir()
    dst.mkdir()
    script = f"mount --bind {src} {dst} && mount -o remount,bind,ro {dst} && ! touch {dst}/x 2>/dev/null"
    try:
        return subprocess.run(["unshare", "-m", "sh", "-c", script], check=False).returncode == 0
    except FileNotFoundError:
        return False


def test_a_read_only_index_answers_and_refuses_writes_clearly(
    tmp_path: Path, indexed: tuple[Path, IndexLayout]
) -> None:
    """Real read-only media where this process can make it: a read-only bind mount as root, file modes
    otherwise (root ignores them). Either way nothing under the index may change."""
    _, layout = indexed
    frozen = tmp_path / "frozen-index"
    shutil.copytree(layout.root, frozen, symlinks=True)
    view = tmp_path / "read-only-index"
    view.mkdir()
    config = write_config(tmp_path / "ro", index={"path": str(view)})
    before = tree(frozen)
    bind = os.geteuid() == 0 and _ro_bind_works(tmp_path)
    if not bind:
        view.rmdir()
        frozen.rename(view)
        subprocess.run(["chmod", "-R", "a-w", str(view)], check=True)
        frozen = view

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        command = [str(RAG), *args, "--config", str(config)]
        if bind:
            mount = f'mount --bind {frozen} {view} && mount -o remount,bind,ro {view} && exec "$@"'
            command = ["unshare", "-m", "sh", "-c", mount, "sh", *command]
        env = {**os.environ, **(env or {})}
        return subprocess.run(command, capture_output=True, text=True, env=env, check=False)

    try:
        search = run("search", "--json", QUERY)
        assert search.returncode == 0, search.stderr
        assert '"id"' in search.stdout
        doctor = run("doctor")
        assert "index stores: LanceDB, Tantivy and manifest agree" in doctor.stdout, doctor.stdout
        assert run("status").returncode == 0
        # Root ignores file modes, so only a real read-only mount shows the refusal there.
        env = None if bind or os.geteuid() != 0 else {"RAGGITY_FAIL_AT": "index:claim:EROFS"}
        ingest = run("ingest", str(tmp_path / "docs"), env=env)
        assert ingest.returncode == 8, ingest.stderr
        line = assert_clean_error(ingest.stderr)
        assert f"{view}: cannot write here" in line
        assert tree(frozen) == before
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(frozen)], check=True)


def test_status_counts_what_exists_while_an_ingest_deletes_files(tmp_path: Path) -> None:
    folder = tmp_path / "churn"
    (folder / "sub").mkdir(parents=True)
    for name in ("a", "b", "sub/c"):
        (folder / name).write_bytes(b"x" * 100)

    def deleted_meanwhile(path: Path) -> os.stat_result:
        if path.name == "b":
            path.unlink()  # as a compaction does between the listing and the stat
        return os.lstat(path)

    assert folder_size(folder, stat=deleted_meanwhile) == 200


def test_status_counts_only_raggitys_own_files(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "someone-elses.bin").write_bytes(b"x" * 50_000)
    config = write_config(tmp_path, index={"path": str(folder)})
    status = index_status(load_config(config))
    assert status.disk_bytes == 0
    assert not status.exists


def test_queries_during_a_rebuild_say_so(tmp_path: Path) -> None:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs", 8)
    layout = IndexLayout(tmp_path / ".raggity")
    assert rag(config, "ingest").returncode == 0
    killed = rag(config, "ingest", "--rebuild", env={"RAGGITY_KILL_AT": "read:3"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    search = rag(config, "search", QUERY)
    assert search.returncode == 0, search.stderr
    assert "a rebuild of the index stopped after 0 files" in search.stderr
    assert "run `rag ingest` to finish it" in search.stderr
    assert "a rebuild of the index stopped" in rag(config, "status").stdout
    assert "a rebuild of the index stopped" in rag(config, "doctor").stdout
    with IngestLock(layout.lock):  # as a running rebuild holds it
        running = rag(config, "search", QUERY)
    assert f"the index is being rebuilt (pid {os.getpid()}, 0 files so far)" in running.stderr

    assert rag(config, "ingest").returncode == 0
    after = rag(config, "search", QUERY)
    assert after.returncode == 0
    assert "rebuil" not in after.stderr


def test_any_command_reports_a_full_disk_as_such() -> None:
    """The CLI's error boundary: a full disk met outside the index writers is not an internal error."""
    app = typer.Typer(cls=GuardedGroup)

    @app.command()
    def save() -> None:
        raise OSError(errno.ENOSPC, "No space left on device", "/data/raggity.toml")

    @app.command()
    def other() -> None:
        raise OSError(errno.EIO, "Input/output error", "/data/x")

    full = CliRunner().invoke(app, ["save"])
    assert full.exit_code == 9
    assert full.output.splitlines()[0] == "error: /data/raggity.toml: no space left on device"
    assert CliRunner().invoke(app, ["other"]).exit_code == 70
