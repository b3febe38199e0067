"""A raggity.toml found by searching up may reach outside its folder only once the user trusts its content."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest

from raggity.config import CONFIG_ENV, CONFIG_NAME, load_config
from raggity.config.loader import read_config_bytes
from raggity.config.schema import SECTIONS
from raggity.config.trust import TrustStore, content_hash, reaching_keys, trust_file
from raggity.core.errors import ConfigError

# Each value reaches outside the config's folder: follows links out, reads or writes another
# folder, or loads a model file that no packaged hash vouches for.
REACHING = {
    "follow_symlinks": ("ingest", "follow_symlinks = true"),
    "ingest path outside": ("ingest", 'paths = ["docs", "../../.ssh"]'),
    "ignore file that is a path": ("ingest", 'ignore_files = [".gitignore", "/dev/zero"]'),
    "index path outside": ("index", 'path = "../elsewhere"'),
    "absolute index path": ("index", 'path = "/var/tmp/raggity-index"'),
    "generator file, even inside": ("generation", 'model_path = "model.gguf"'),
    "generator name that is a path": ("generation", 'model = "../../downloads/x"'),
    "embedder folder": ("embedding", 'model_path = "models/embedder"'),
    "embedder name that is a path": ("embedding", 'model = "/opt/models/x"'),
    "reranker folder": ("retrieval", 'rerank_model = "./models/reranker"'),
    # A cloned repository's config must not make `rag ingest` upload the user's files to its bucket.
    "index on object storage": ("index", 'path = "s3://their-bucket/docs"'),
    "ray cluster": ("ingest", 'ray_address = "ray://10.0.0.9:10001"'),
}

HARMLESS = """\
[index]
path = ".index"
[ingest]
paths = ["docs", "notes/2024"]
ignore_files = [".gitignore", ".ragignore"]
[retrieval]
top_k = 3
rerank_model = "ms-marco-MiniLM-L-6-v2"
[generation]
model = "smollm2-135m-instruct"
"""


def _project(tmp_path: Path, text: str) -> tuple[Path, Path]:
    """A cloned-repository layout: tmp/repo/raggity.toml, and a subfolder to run from."""
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    config = repo / CONFIG_NAME
    config.write_text(text, encoding="utf-8")
    return config, repo / "sub"


def _refusal(start: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(None, start)
    return str(info.value)


@pytest.mark.parametrize("case", list(REACHING))
def test_a_found_config_may_not_reach_outside_until_trusted(tmp_path: Path, case: str) -> None:
    section, line = REACHING[case]
    config, start = _project(tmp_path, f"[{section}]\n# reviewed?\n\n{line}\n")
    message = _refusal(start)
    key = line.split(" =")[0]
    assert message.startswith(f"{config}:4: [{section}] {key} = "), message
    assert "reaches outside this folder" in message
    assert f"rag trust {config}" in message

    TrustStore().trust(config, content_hash(config.read_bytes()))
    [reaching] = reaching_keys(load_config(None, start))
    assert (reaching.section, reaching.key) == (section, key)


def test_harmless_keys_of_an_untrusted_found_config_apply(tmp_path: Path) -> None:
    config, start = _project(tmp_path, HARMLESS)
    loaded = load_config(None, start)
    assert reaching_keys(loaded) == []
    assert loaded.retrieval.top_k == 3
    assert loaded.index_dir == config.parent / ".index"
    assert TrustStore().digest(config) is None


def test_an_edit_after_trusting_needs_trust_again(tmp_path: Path) -> None:
    config, start = _project(tmp_path, "[ingest]\nfollow_symlinks = true\n")
    TrustStore().trust(config, content_hash(config.read_bytes()))
    assert load_config(None, start).ingest.follow_symlinks is True

    config.write_text("[ingest]\nfollow_symlinks = true\n# harmless-looking edit\n", encoding="utf-8")
    assert "it changed since you trusted it" in _refusal(start)

    TrustStore().trust(config, content_hash(read_config_bytes(config)))
    assert load_config(None, start).ingest.follow_symlinks is True
    assert TrustStore().revoke(config)
    assert "reaches outside this folder" in _refusal(start)


def test_trust_is_per_file_not_per_content(tmp_path: Path) -> None:
    text = "[ingest]\nfollow_symlinks = true\n"
    trusted, _ = _project(tmp_path / "mine", text)
    TrustStore().trust(trusted, content_hash(trusted.read_bytes()))
    _, start = _project(tmp_path / "cloned", text)
    assert "reaches outside this folder" in _refusal(start)


def test_a_link_inside_the_folder_that_leads_out_counts_as_outside(tmp_path: Path) -> None:
    _, start = _project(tmp_path, '[index]\npath = "index"\n')
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (start.parent / "index").symlink_to(outside)
    assert re.search(r"\[index\] path = \"index\" reaches outside", _refusal(start))


def test_a_named_config_is_the_users_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config, start = _project(tmp_path, "[ingest]\nfollow_symlinks = true\n")
    assert load_config(config, start).ingest.follow_symlinks is True
    monkeypatch.setenv(CONFIG_ENV, str(config))
    assert load_config(None, start).ingest.follow_symlinks is True


def test_a_trusted_file_owned_by_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, start = _project(tmp_path, "[ingest]\nfollow_symlinks = true\n")
    TrustStore().trust(config, content_hash(config.read_bytes()))
    # The process acts as a user other than the file's owner.
    owner = config.stat().st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    message = _refusal(start)
    assert f"belongs to another user (uid {owner})" in message
    assert "--config" in message


def test_a_damaged_trust_file_trusts_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    config, start = _project(tmp_path, "[ingest]\nfollow_symlinks = true\n")
    trust_file().parent.mkdir(parents=True)
    trust_file().write_text('{"configs": {"' + str(config) + '": ', encoding="utf-8")
    assert "reaches outside this folder" in _refusal(start)

    TrustStore().trust(config, content_hash(config.read_bytes()))
    assert load_config(None, start).ingest.follow_symlinks is True


def test_the_configuration_page_lists_exactly_the_keys_that_need_trust() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = page.split("## Which settings need trust")[1].split("\n## ")[0]
    table = [line for line in section.splitlines() if line.startswith("| `[")]
    documented = {f"[{s}] {k}" for line in table for s, k in re.findall(r"`\[(\w+)\] (\w+)`", line)}
    reaching = {
        f"[{name}] {field.name}"
        for name, cls in SECTIONS.items()
        for field in dataclasses.fields(cls)
        if field.metadata.get("reach") is not None
    }
    assert documented == reaching
