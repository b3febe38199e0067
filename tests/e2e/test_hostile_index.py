"""A repository's `.raggity/` is data, not instructions: a crafted manifest cannot make `rag ingest`
read files outside the ingested folder, and files swapped after discovery are not followed.

Every "secret" here is a file in pytest's temporary folder outside the ingested one."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from raggity.store.manifest import FORMAT_VERSION, load_manifest
from tests.support import INSTALL_MD, SOURDOUGH_TXT, rag, write_config

SECRET = "zanzibar quokka private passphrase"
SECRET_TEXT = f"# Private\n\nThe {SECRET} opens the vault.\n"


def _entry(path: Path, *, known: bool) -> dict[str, object]:
    """A manifest entry for `path`; `known`: with its real digest and size, as if the index held it."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest() if known else "0" * 64
    return {"sha256": digest, "size": len(data), "mtime_ns": 1, "chunk_ids": []}


def _plant_index(repo: Path, entries: dict[str, dict[str, object]], *, foreign: bool = True) -> Path:
    """The repository's own `.raggity/`: marked, with a manifest listing `entries`."""
    index = repo / ".raggity"
    index.mkdir(parents=True)
    (index / ".raggity-index").write_text('{"raggity_index": 1}\n', encoding="utf-8")
    fingerprint = (
        {"embedder": "someone-elses-model", "chunk_tokens": 64, "parent_tokens": 256} if foreign else None
    )
    manifest = {"format_version": FORMAT_VERSION, "fingerprint": fingerprint, "sources": entries}
    (index / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return index


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    write_config(repo)
    (repo / "docs").mkdir()
    (repo / "docs" / "install.md").write_text(INSTALL_MD, encoding="utf-8")
    return repo


def _secrets(tmp_path: Path) -> dict[str, Path]:
    """Files outside the repository, each only kept out by one rule."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / "notes").mkdir()
    (home / "linked").mkdir()
    key = home / ".ssh" / "id_rsa.txt"  # hidden folder (and a key's name)
    diary = home / "notes" / "diary.md"  # a plain document the index never held
    vault = home / "vault.md"  # reached through a link
    for path in (key, diary, vault):
        path.write_text(SECRET_TEXT, encoding="utf-8")
    link = home / "linked" / "vault.md"
    link.symlink_to(vault)
    return {"key": key, "diary": diary, "vault": vault, "link": link}


def _assert_secret_kept(repo: Path, secrets: dict[str, Path], outputs: list[str]) -> None:
    for output in outputs:
        assert SECRET not in output
    sources = load_manifest(repo / ".raggity" / "manifest.json").sources
    assert sorted(sources) == [str((repo / "docs" / "install.md").resolve())]
    found = rag("search", "--json", SECRET, cwd=repo)
    assert found.returncode == 0, found.stderr
    assert SECRET not in found.stdout
    for name in ("key", "diary", "vault"):
        assert secrets[name].read_text(encoding="utf-8") == SECRET_TEXT
    assert secrets["link"].is_symlink()


@pytest.mark.parametrize("rebuild", [False, True], ids=["foreign-fingerprint", "rebuild"])
def test_a_crafted_manifest_cannot_make_ingest_read_outside_files(tmp_path: Path, rebuild: bool) -> None:
    """Before, carry-over checked only is_file(): every listed file was read and indexed."""
    repo = _repo(tmp_path)
    secrets = _secrets(tmp_path)
    _plant_index(
        repo,
        {
            str(secrets["key"]): _entry(secrets["key"], known=True),
            str(secrets["diary"]): _entry(secrets["diary"], known=False),
            str(secrets["link"]): _entry(secrets["link"], known=True),
        },
        foreign=not rebuild,
    )
    done = rag("ingest", "docs", "--json", *(["--rebuild"] if rebuild else []), cwd=repo)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["added"] == 1
    reasons = {item["source"]: item["reason"] for item in report["skipped"]}
    assert "hidden" in reasons[str(secrets["key"])]
    assert "changed since it was indexed" in reasons[str(secrets["diary"])]
    assert "symlink" in reasons[str(secrets["link"])]
    _assert_secret_kept(repo, secrets, [done.stdout, done.stderr])


def test_a_rebuild_carries_over_unchanged_files_of_other_folders(tmp_path: Path) -> None:
    """The carry-over the checks keep: files indexed from another folder are indexed again, unless
    edited since (those wait for their folder's next ingest)."""
    repo = _repo(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "sourdough.txt").write_text(SOURDOUGH_TXT, encoding="utf-8")
    (other / "edited.md").write_text("# Edited\n\nFirst version of the comet notes.\n", encoding="utf-8")
    for args in (["docs"], [str(other)]):
        assert rag("ingest", *args, cwd=repo).returncode == 0
    (other / "edited.md").write_text("# Edited\n\nSecond version of the comet notes.\n", encoding="utf-8")
    done = rag("ingest", "docs", "--rebuild", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    sources = load_manifest(repo / ".raggity" / "manifest.json").sources
    assert sorted(sources) == sorted(
        [str((repo / "docs" / "install.md").resolve()), str((other / "sourdough.txt").resolve())]
    )
    reasons = {item["source"]: item["reason"] for item in json.loads(done.stdout)["skipped"]}
    assert "changed since it was indexed" in reasons[str((other / "edited.md").resolve())]
    # The summary says why it rebuilt: before, an explicit --rebuild said "(settings changed)".
    text = rag("ingest", "docs", "--rebuild", cwd=repo)
    assert "(full rebuild: --rebuild)" in text.stdout
    assert "settings changed" not in text.stdout


def test_a_file_replaced_by_a_link_after_discovery_is_not_followed(tmp_path: Path) -> None:
    """The swap is done by the ingest's own progress seam: a file read after discovery is replaced by a
    link to an outside file. Before, the reader opened the path and indexed the outside text under
    the old name."""
    from raggity.api.session import Raggity  # noqa: PLC0415 - imported with the state isolated
    from raggity.config.loader import load_config  # noqa: PLC0415 - imported with the state isolated
    from raggity.pipeline.ingest.report import SilentProgress  # noqa: PLC0415 - imported with the state isolated

    repo = _repo(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text(SECRET_TEXT, encoding="utf-8")
    victim = repo / "docs" / "swapped.md"
    victim.write_text("# Swapped\n\nA harmless page about gardening.\n", encoding="utf-8")

    class SwapOnPlan(SilentProgress):
        def planned(self, files: int, sizes: Mapping[str, int]) -> None:
            victim.unlink()
            victim.symlink_to(secret)

    session = Raggity(load_config(repo / "raggity.toml"))
    report = session.ingest([repo / "docs"], progress=SwapOnPlan())
    reasons = {s.source: s.reason for s in report.skipped}
    assert "symlink" in reasons[str(repo.resolve() / "docs" / "swapped.md")]
    sources = load_manifest(repo / ".raggity" / "manifest.json").sources
    assert str(repo.resolve() / "docs" / "swapped.md") not in sources
    assert all(SECRET not in hit.chunk.text for hit in session.search(SECRET).candidates)
    assert secret.read_text(encoding="utf-8") == SECRET_TEXT


def test_a_file_replaced_by_a_fifo_after_discovery_is_skipped_not_waited_on(tmp_path: Path) -> None:
    """Before, hashing opened the FIFO blocking: the ingest hung for good, holding the lock."""
    from raggity.api.session import Raggity  # noqa: PLC0415 - imported with the state isolated
    from raggity.config.loader import load_config  # noqa: PLC0415 - imported with the state isolated
    from raggity.pipeline.ingest.report import SilentProgress  # noqa: PLC0415 - imported with the state isolated

    repo = _repo(tmp_path)
    victim = repo / "docs" / "swapped.md"
    victim.write_text("# Swapped\n\nA harmless page about gardening.\n", encoding="utf-8")

    class FifoOnPlan(SilentProgress):
        def planned(self, files: int, sizes: Mapping[str, int]) -> None:
            victim.unlink()
            os.mkfifo(victim)

    # Should the ingest wait on the FIFO, a writer that opens and closes it lets it go on (with an
    # empty read), so that the failure is this flag and not a test that never ends.
    unblocked = threading.Event()

    def release() -> None:
        time.sleep(30)
        with contextlib.suppress(OSError):
            os.close(os.open(victim, os.O_WRONLY | os.O_NONBLOCK))
            unblocked.set()

    threading.Thread(target=release, daemon=True).start()
    session = Raggity(load_config(repo / "raggity.toml"))
    report = session.ingest([repo / "docs"], progress=FifoOnPlan())
    assert not unblocked.is_set(), "the ingest waited on the FIFO"
    reasons = {s.source: s.reason for s in report.skipped}
    assert reasons[str(repo.resolve() / "docs" / "swapped.md")] == "not a regular file"
    assert report.added == 1
