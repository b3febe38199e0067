"""The `rag` command line, in process through typer's CliRunner and as the installed console script."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from raggity.cli.main import app
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest
from tests.support import RAG, assert_clean_error, rag, store_ids, write_config, write_corpus

EXAMPLE = Path(__file__).resolve().parents[2] / "raggity.toml.example"


@dataclass(frozen=True)
class Project:
    root: Path
    config: Path
    files: dict[str, Path]
    ingest_stdout: str


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Project:
    root = tmp_path_factory.mktemp("cli")
    config = write_config(root)
    files = write_corpus(root / "docs")
    env = {**os.environ, **{name: str(path) for name, path in _state_dirs.items()}}
    env.pop("RAGGITY_CONFIG", None)
    done = rag("ingest", "docs", "--json", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    return Project(root, config, files, done.stdout)


def test_console_script_is_installed() -> None:
    assert RAG.is_file()
    assert os.access(RAG, os.X_OK)


# -- init ----------------------------------------------------------------------------------------


def test_init_writes_the_example_and_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "raggity.toml"
    runner = CliRunner()
    first = runner.invoke(app, ["init", str(target)])
    assert first.exit_code == 0, first.output
    assert target.read_text(encoding="utf-8") == EXAMPLE.read_text(encoding="utf-8")
    assert "wrote" in first.stdout

    target.write_text("# my edits\n", encoding="utf-8")
    second = runner.invoke(app, ["init", str(target)])
    assert second.exit_code != 0
    line = assert_clean_error(second.stderr)
    assert "already exists" in line
    assert str(target) in line
    assert target.read_text(encoding="utf-8") == "# my edits\n"

    forced = runner.invoke(app, ["init", str(target), "--force"])
    assert forced.exit_code == 0
    assert target.read_text(encoding="utf-8") == EXAMPLE.read_text(encoding="utf-8")


def test_init_as_installed_command_into_a_folder(tmp_path: Path) -> None:
    done = rag("init", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "raggity.toml").read_text(encoding="utf-8") == EXAMPLE.read_text(encoding="utf-8")
    again = rag("init", cwd=tmp_path)
    assert again.returncode != 0
    assert "already exists" in assert_clean_error(again.stderr)


def test_init_replaces_no_link_or_fifo_and_names_a_path_it_cannot_write(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text("# mine\n", encoding="utf-8")
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    not_a_folder = tmp_path / "real.toml" / "x.toml"
    runner = CliRunner()
    for target, reason in [
        (link, "not a regular file"),
        (fifo, "not a regular file"),
        (not_a_folder, "cannot write here (a folder on its path is a file)"),
        (tmp_path / ("a" * 300 + ".toml"), "cannot write here (file name too long)"),
    ]:
        done = runner.invoke(app, ["init", str(target), "--force"])
        assert done.exit_code not in (0, 70), done.output
        line = assert_clean_error(done.stderr)
        assert str(target) in line
        assert reason in line
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "# mine\n"
    assert fifo.is_fifo()
    # (Not /dev/null as well: on a regression, as root, that would replace the machine's /dev/null.)


# -- ingest, search, status, doctor --------------------------------------------------------------


def test_ingest_json_report(project: Project) -> None:
    report = json.loads(project.ingest_stdout)
    assert report["added"] == len(project.files)
    assert report["skipped"] == []
    assert report["index"] == str(project.root / ".raggity")
    assert report["chunks_written"] == len(store_ids(IndexLayout(project.root / ".raggity")))


def test_search_json_round_trip(project: Project) -> None:
    done = rag("search", "brew install frobnicator", "--json", "-k", "3", cwd=project.root)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert len(results) == 3
    assert results[0]["source"] == str(project.files["markdown"])
    assert "brew install frobnicator" in results[0]["text"]
    ids = store_ids(IndexLayout(project.root / ".raggity"))
    assert {r["id"] for r in results} <= ids

    in_process = CliRunner().invoke(
        app, ["search", "brew install frobnicator", "--json", "-k", "3", "-c", str(project.config)]
    )
    assert in_process.exit_code == 0, in_process.output
    assert [r["id"] for r in json.loads(in_process.stdout)] == [r["id"] for r in results]


def test_status_shows_file_and_chunk_counts(project: Project) -> None:
    manifest = load_manifest(project.root / ".raggity" / "manifest.json")
    chunks = len(manifest.live_ids())
    for output in (
        rag("status", cwd=project.root).stdout,
        CliRunner().invoke(app, ["status", "-c", str(project.config)]).stdout,
    ):
        assert re.search(rf"^files:\s+{len(project.files)}$", output, re.MULTILINE), output
        assert re.search(rf"^chunks:\s+{chunks}$", output, re.MULTILINE), output
        assert f"config:      {project.config}" in output

    data = json.loads(CliRunner().invoke(app, ["status", "--json", "-c", str(project.config)]).stdout)
    assert (data["files"], data["chunks"], data["exists"]) == (len(project.files), chunks, True)


def test_doctor_passes_on_a_healthy_index(project: Project) -> None:
    done = rag("doctor", cwd=project.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    assert "LanceDB, Tantivy and manifest agree" in done.stdout
    assert f"{len(project.files)} files" in done.stdout


def test_doctor_reports_a_missing_index_with_its_fix(tmp_path: Path) -> None:
    write_config(tmp_path)
    done = rag("doctor", cwd=tmp_path)
    assert done.returncode == 1
    assert re.search(r"FAIL index: no index at .*\.raggity", done.stdout), done.stdout
    assert "fix: run `rag ingest PATH`" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


# -- errors --------------------------------------------------------------------------------------

BAD_CONFIGS = {
    "unknown key": ("[retrieval]\nrerank = false\ntopk = 3\n", 3, "topk"),
    "wrong type": ('[retrieval]\nrerank = false\ntop_k = "five"\n', 3, "top_k"),
    "negative": ("[retrieval]\nrerank = false\n\ntop_k = -1\n", 4, "top_k"),
    "malformed": ("[retrieval]\nrerank = false\ntop_k = = 3\n", 3, None),
}


@pytest.mark.parametrize("case", list(BAD_CONFIGS))
def test_config_errors_name_file_line_and_key(tmp_path: Path, case: str) -> None:
    text, line, key = BAD_CONFIGS[case]
    (tmp_path / "raggity.toml").write_text(text, encoding="utf-8")
    done = rag("search", "anything", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    message = assert_clean_error(done.stderr)
    assert str(tmp_path / "raggity.toml") in message
    assert re.search(rf"raggity\.toml:{line}\b|\bline {line}\b", message), message
    if key is not None:
        assert re.search(rf"\b{key}\b", message), message


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    (tmp_path / "raggity.toml").write_text("[retrieval]\ntopk = 3\n", encoding="utf-8")
    done = rag("--debug", "search", "anything", cwd=tmp_path)
    assert done.returncode != 0
    assert "Traceback (most recent call last)" in done.stderr
    assert "ConfigError" in done.stderr
    assert "topk" in done.stderr


def test_ingest_of_a_missing_path_fails_in_one_line(tmp_path: Path) -> None:
    write_config(tmp_path)
    missing = tmp_path / "no-such-folder"
    done = rag("ingest", str(missing), cwd=tmp_path)
    assert done.returncode != 0
    line = assert_clean_error(done.stderr)
    assert str(missing) in line
    assert not (tmp_path / ".raggity" / "manifest.json").exists()


def test_search_before_any_ingest_says_to_ingest(tmp_path: Path) -> None:
    write_config(tmp_path)
    done = rag("search", "anything", cwd=tmp_path)
    assert done.returncode == 4
    assert_clean_error(done.stderr)
    assert "rag ingest" in done.stderr


def test_an_empty_search_is_an_error_as_an_empty_question_is(project: Project) -> None:
    for command in ("search", "ask"):
        done = rag(command, "  ", cwd=project.root)
        assert done.returncode == 1, done.stdout
        assert "is empty" in assert_clean_error(done.stderr)
        assert done.stdout == ""


def test_second_ingest_while_locked_exits_5(tmp_path: Path) -> None:
    write_config(tmp_path)
    write_corpus(tmp_path / "docs")
    layout = IndexLayout(tmp_path / ".raggity")
    with IngestLock(layout.lock):
        done = rag("ingest", "docs", cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    line = assert_clean_error(done.stderr)
    assert "another ingest is running" in line
    assert f"pid {os.getpid()}" in line
    assert "--wait" in done.stderr
    assert not layout.exists()

    # Once the lock is free the same command works.
    done = rag("ingest", "docs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert load_manifest(layout.manifest).sources


def test_ask_json_reports_refusal_verification_and_source_warnings(project: Project) -> None:
    # In process: a model load in a fresh process can outlast the console-script timeout on a busy machine.
    done = CliRunner().invoke(
        app,
        [
            "ask",
            "How much disk space does frobnicator need on Linux?",
            "--json",
            "--config",
            str(project.config),
        ],
    )
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)

    assert {"abstained", "refused", "verified", "unsupported_reply", "citations"} <= set(data)
    assert data["verified"] == any(c["supported"] for c in data["citations"])
    assert all("warning" in c and c["warning"] is None for c in data["citations"])  # ordinary docs
    if data["refused"] or data["abstained"]:
        assert data["citations"] == []
    else:  # an answer has a source for at least one sentence, or it is declined
        assert data["verified"]
        assert data["unsupported_reply"] is None


def test_a_decline_prints_the_closest_passages_under_their_own_heading(project: Project) -> None:
    done = CliRunner().invoke(
        app, ["ask", "What is the capital of Mongolia?", "--config", str(project.config)]
    )

    assert done.exit_code == 0, done.output
    _, heading, after = done.stdout.partition("Closest passages (they did not answer it)")
    assert heading
    assert "Sources" not in done.stdout  # never presented as citations
    # Two lines a passage: where it is (file:place, as rag show opens it), then its closest line.
    places = [line.strip().split(":")[0] for line in after.splitlines()[1:] if re.match(r"  \S", line)]
    assert 1 <= len(places) <= 3
    assert {Path(place).name for place in places} <= {p.name for p in project.files.values()}


# -- trust: a config found by searching up --------------------------------------------------------


def test_a_cloned_config_cannot_follow_links_out_until_trusted(tmp_path: Path) -> None:
    secrets = tmp_path / "home" / ".aws"
    secrets.mkdir(parents=True)
    (secrets / "credentials.txt").write_text("aws_secret_access_key = hunter2 zebra\n", encoding="utf-8")
    repo = tmp_path / "cloned"
    config = write_config(repo, ingest={"follow_symlinks": True})
    (repo / "docs").mkdir()
    (repo / "docs" / "readme.md").write_text("# Readme\n\nThis project tidies files.\n", encoding="utf-8")
    (repo / "docs" / "aws").symlink_to(secrets)
    index = repo / ".raggity"

    refused = rag("ingest", "docs", cwd=repo / "docs")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    line = assert_clean_error(refused.stderr)
    assert f"{config}:" in line
    assert "[ingest] follow_symlinks = true reaches outside this folder" in line
    assert f"rag trust {config}" in refused.stderr
    assert not index.exists()

    trusted = rag("trust", cwd=repo / "docs")
    assert trusted.returncode == 0, trusted.stderr
    assert f"trusted {config}" in trusted.stdout
    assert "it may use: [ingest] follow_symlinks = true" in trusted.stdout
    done = rag("ingest", "docs", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"] == 2  # the user chose to follow the link

    with config.open("a", encoding="utf-8") as handle:
        handle.write("# edited after trusting\n")
    changed = rag("search", "secret", cwd=repo)
    assert changed.returncode == 2
    assert "changed since you trusted it" in assert_clean_error(changed.stderr)
    named = rag("--config", str(config), "search", "hunter2", "--json", cwd=repo)
    assert named.returncode == 0, named.stderr

    revoked = rag("trust", "--revoke", str(repo), cwd=tmp_path)
    assert revoked.returncode == 0
    assert f"no longer trusted: {config}" in revoked.stdout


def test_trust_without_a_config_in_reach_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["trust"])
    assert done.exit_code == 2
    assert f"{tmp_path}: no raggity.toml here or in a parent folder" in assert_clean_error(done.stderr)
    missing = CliRunner().invoke(app, ["trust", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2
    assert "config file not found" in assert_clean_error(missing.stderr)
