"""Small options a user reaches for: --version, --top-k, --path, doctor --json, shell completion."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from raggity.pipeline.search.hybrid import path_matches
from tests.support import assert_clean_error, rag, write_config, write_corpus

QUESTION = "How much disk space does frobnicator need on Linux?"


@dataclass(frozen=True)
class Project:
    root: Path
    config: Path
    files: dict[str, Path]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = tmp_path_factory.mktemp("options")
    config = write_config(root)
    files = write_corpus(root / "docs")
    done = rag("ingest", "--config", str(config), str(root / "docs"), cwd=root)
    assert done.returncode == 0, done.stderr
    return Project(root, config, files)


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    from importlib.metadata import version  # noqa: PLC0415 - imported where the test needs it

    done = rag("--version", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.strip() == f"raggity {version('raggity')}"


@pytest.mark.parametrize(
    ("source", "glob", "expected"),
    [
        ("/home/u/docs/install.md", "*.md", True),
        ("/home/u/docs/install.md", "docs/*", True),
        ("/home/u/docs/install.md", "install.md", True),
        ("/home/u/docs/install.md", "stall.md", False),  # the end of the path is whole names
        ("/home/u/docs/install.md", "*.txt", False),
        ("/home/u/notes/docs.txt", "docs/*", False),
    ],
)
def test_path_globs_match_the_end_of_the_path(source: str, glob: str, expected: bool) -> None:
    assert path_matches(source, glob) is expected


def test_search_top_k_and_path_filter(project: Project) -> None:
    args = ("search", "--config", str(project.config), "--json", QUESTION)
    everything = json.loads(rag(*args, "--top-k", "6", cwd=project.root).stdout)
    assert len(everything) == 6
    assert len({Path(r["source"]).suffix for r in everything}) > 1  # the filter below has work to do
    only_text = json.loads(rag(*args, "--top-k", "6", "--path", "*.txt", cwd=project.root).stdout)
    assert only_text
    assert {r["source"] for r in only_text} == {str(project.files["text"])}
    nothing = rag(*args, "--path", "*.nomatch", cwd=project.root)
    assert nothing.returncode == 0
    assert json.loads(nothing.stdout) == []


def test_ask_top_k_and_path_reach_the_answer_step(project: Project) -> None:
    done = rag(
        "ask", "--config", str(project.config), "--json", "--no-cache", "--top-k", "1",
        "--path", "install.md", QUESTION, cwd=project.root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    stages = {s["stage"]: s for s in answer["trace"]}
    assert stages["select"]["n_out"] == 1
    assert stages["select"]["detail"]["top_k"] == 1
    assert all(c["source"] == str(project.files["markdown"]) for c in answer["citations"])

    def fused(*extra: str) -> int:
        args = ("search", "--config", str(project.config), "--json", "--trace", *extra, QUESTION)
        trace = json.loads(rag(*args, cwd=project.root).stdout)["trace"]
        return int(next(s["n_out"] for s in trace if s["stage"] == "fusion"))

    # The answer step saw exactly the candidates a path-filtered search finds, fewer than without it.
    assert stages["fusion"]["n_out"] == fused("--path", "install.md") < fused()


def test_doctor_json_lists_every_check_and_keeps_the_exit_code(project: Project) -> None:
    done = rag("doctor", "--config", str(project.config), "--json", cwd=project.root)
    checks = json.loads(done.stdout)
    assert {"name", "ok", "message", "fix", "severity"} <= set(checks[0])
    names = [c["name"] for c in checks]
    assert "config" in names
    assert any(n.startswith("index") for n in names)
    failing = any(not c["ok"] and c["severity"] == "error" for c in checks)
    assert done.returncode == (1 if failing else 0)


def test_shell_completion_is_offered(tmp_path: Path) -> None:
    done = rag("--help", cwd=tmp_path)
    assert "--install-completion" in done.stdout
    assert "--show-completion" in done.stdout


def test_ask_model_switches_the_generator_without_editing_the_config(project: Project) -> None:
    # The config names SmolLM2 (tests/support.py); the flag's model is the one resolved instead.
    args = ("ask", "--config", str(project.config), "--json", "--no-cache", QUESTION)
    unknown = rag(*args, "--model", "no-such-model", cwd=project.root)
    assert unknown.returncode == 3, unknown.stderr
    assert "no-such-model" in assert_clean_error(unknown.stderr)
    assert rag(*args, cwd=project.root).returncode == 0  # without the flag, the config's model answers


def test_an_unknown_model_is_an_error_even_when_the_question_abstains(project: Project) -> None:
    # Abstaining never loads the model, so the name was never checked and a typo exited 0.
    done = rag("ask", "--config", str(project.config), "--model", "no-such-model", "?!?!", cwd=project.root)
    assert done.returncode == 3, done.stdout
    assert "no-such-model" in assert_clean_error(done.stderr)
