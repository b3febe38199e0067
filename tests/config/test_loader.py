"""Config discovery, path resolution and validation messages of raggity.config.loader."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from raggity.config import CONFIG_ENV, CONFIG_NAME, Config, find_config_file, load_config
from raggity.config.schema import GenerationConfig, IngestConfig, RetrievalConfig
from raggity.core.errors import ConfigError


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _top_k_file(path: Path, top_k: int) -> Path:
    return _write(path, f"[retrieval]\ntop_k = {top_k}\n")


def _config_error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(explicit=path)
    return str(info.value)


# --- discovery -----------------------------------------------------------------------------------


def test_explicit_path_beats_environment_and_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = _top_k_file(tmp_path / "explicit" / "mine.toml", 1)
    from_env = _top_k_file(tmp_path / "env" / "env.toml", 2)
    project = tmp_path / "project"
    _top_k_file(project / CONFIG_NAME, 3)
    monkeypatch.setenv(CONFIG_ENV, str(from_env))

    assert find_config_file(explicit, project) == explicit.resolve()
    assert load_config(explicit, project).retrieval.top_k == 1


def test_environment_beats_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from_env = _top_k_file(tmp_path / "env" / "env.toml", 2)
    project = tmp_path / "project"
    _top_k_file(project / CONFIG_NAME, 3)
    monkeypatch.setenv(CONFIG_ENV, str(from_env))

    assert find_config_file(None, project) == from_env.resolve()
    assert load_config(None, project).retrieval.top_k == 2


def test_walk_used_when_no_explicit_path_or_environment(tmp_path: Path) -> None:
    project = tmp_path / "project"
    found = _top_k_file(project / CONFIG_NAME, 3)

    assert find_config_file(None, project) == found.resolve()
    assert load_config(None, project).retrieval.top_k == 3


def test_walk_finds_config_in_grandparent(tmp_path: Path) -> None:
    config = _top_k_file(tmp_path / CONFIG_NAME, 4)
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)

    assert find_config_file(None, start) == config.resolve()
    assert load_config(None, start).retrieval.top_k == 4


def test_walk_stops_at_nearest_config(tmp_path: Path) -> None:
    _top_k_file(tmp_path / CONFIG_NAME, 4)
    nearer = _top_k_file(tmp_path / "a" / CONFIG_NAME, 5)
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)

    assert find_config_file(None, start) == nearer.resolve()


def test_walk_defaults_to_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _top_k_file(tmp_path / CONFIG_NAME, 6)
    inner = tmp_path / "inner"
    inner.mkdir()
    monkeypatch.chdir(inner)

    assert find_config_file() == config.resolve()


def test_no_config_anywhere_gives_defaults(tmp_path: Path) -> None:
    start = tmp_path / "empty" / "deeper"
    start.mkdir(parents=True)
    # The walk goes up to the filesystem root, beyond this test's control: a stray file above the
    # temporary folder must then be the one found (and none, on a clean machine, gives defaults).
    stray = next((f / CONFIG_NAME for f in start.resolve().parents if (f / CONFIG_NAME).is_file()), None)
    assert find_config_file(None, start) == stray
    if stray is None:
        config = load_config(None, start)
        assert config == Config()
        assert config.source is None


def test_defaults_put_index_in_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))

    assert Config().index_dir == tmp_path / "xdg" / "raggity" / "index"


def test_missing_explicit_file_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "custom.toml"

    with pytest.raises(ConfigError) as info:
        find_config_file(missing, tmp_path)
    assert str(missing) in str(info.value)
    with pytest.raises(ConfigError, match=re.escape(str(missing))):
        load_config(missing, tmp_path)


def test_missing_environment_file_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "gone.toml"
    monkeypatch.setenv(CONFIG_ENV, str(missing))

    with pytest.raises(ConfigError) as info:
        find_config_file(None, tmp_path)
    assert str(missing) in str(info.value)
    assert CONFIG_ENV in str(info.value)


# --- paths resolve against the config file's folder ----------------------------------------------


def test_index_dir_is_relative_to_config_file_not_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    config_file = _write(project / CONFIG_NAME, '[index]\npath = "data/idx"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    config = load_config(explicit=config_file)

    assert config.source == config_file.resolve()
    assert config.index_dir == (project / "data" / "idx").resolve()
    assert config.resolve("docs") == (project / "docs").resolve()


def test_relative_explicit_path_keeps_its_folder_after_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    _write(project / CONFIG_NAME, "[retrieval]\ntop_k = 2\n")
    monkeypatch.chdir(project)
    config = load_config(explicit=Path(CONFIG_NAME))
    monkeypatch.chdir(tmp_path)

    # The default index path ".raggity" sits next to the config file.
    assert config.index_dir == (project / ".raggity").resolve()


def test_absolute_index_path_is_kept(tmp_path: Path) -> None:
    target = (tmp_path / "somewhere" / "index").resolve()
    config_file = _write(tmp_path / "project" / CONFIG_NAME, f'[index]\npath = "{target.as_posix()}"\n')

    assert load_config(explicit=config_file).index_dir == target


# --- errors name file, line and key --------------------------------------------------------------

_RETRIEVAL_LINE = 10
_GENERATION_LINE = 14


def _multi_section(retrieval_line: str = "rerank = true", generation_line: str = "seed = 7") -> str:
    lines = [
        "# project config",  # 1
        "[index]",  # 2
        'path = "idx"',  # 3
        "",  # 4
        "[embedding]",  # 5
        "threads = 2",  # 6
        "",  # 7
        "[retrieval]",  # 8
        "candidates = 10",  # 9
        retrieval_line,  # 10
        "rrf_k = 60",  # 11
        "",  # 12
        "[generation]",  # 13
        generation_line,  # 14
    ]
    return "\n".join(lines) + "\n"


def test_multi_section_template_is_valid(tmp_path: Path) -> None:
    """The template itself loads, so each error below comes from the one offending line."""
    config = load_config(explicit=_write(tmp_path / CONFIG_NAME, _multi_section()))

    assert config.retrieval.candidates == 10
    assert config.generation.seed == 7
    assert config.embedding.threads == 2


@pytest.mark.parametrize(
    ("line", "key", "fragments"),
    [
        ("topk = 3", "topk", ["unknown key", "did you mean top_k?"]),
        ('top_k = "3"', "top_k", ["whole number", "'3'"]),
        ("top_k = 2.5", "top_k", ["whole number", "2.5"]),
        ("top_k = 2.0", "top_k", ["whole number"]),
        ("hybrid_search = true", "hybrid_search", ["unknown key", "did you mean hybrid?"]),
        ("hybrid = 1", "hybrid", ["true or false", "got 1"]),
        ("top_k = -1", "top_k", [">= 1", "got -1"]),
        ("top_k = 0", "top_k", [">= 1", "got 0"]),
        ("sufficiency_floor = 1.5", "sufficiency_floor", ["<= 1", "1.5"]),
        ("relevance_floor = -0.1", "relevance_floor", [">= 0", "-0.1"]),
        ("dedup_cosine = nan", "dedup_cosine", ["must be a number"]),
        ("rerank_max_tokens = 513", "rerank_max_tokens", ["<= 512", "513"]),
        ('rerank = "yes"', "rerank", ["true or false"]),
        ("rerank_model = 3", "rerank_model", ["must be a string"]),
    ],
)
def test_retrieval_errors_name_file_line_and_key(
    tmp_path: Path, line: str, key: str, fragments: list[str]
) -> None:
    path = _write(tmp_path / CONFIG_NAME, _multi_section(retrieval_line=line))

    message = _config_error(path)

    assert message.startswith(f"{path.resolve()}:{_RETRIEVAL_LINE}: ")
    assert key in message
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    ("line", "key", "fragments"),
    [
        # [embedding] also has `threads` (line 6): the line must be the one in [generation].
        ('threads = "four"', "[generation] threads", ["whole number"]),
        # Created up front: 100,000 llama.cpp threads aborted the process.
        ("threads = 100000", "[generation] threads", ["<= 256", "100000"]),
        # llama.cpp took 20 GB before it found a billion tokens too many.
        ("context_size = 1000000000", "[generation] context_size", ["<= 131072"]),
        ("temperature = 2.5", "[generation] temperature", ["<= 2"]),
        ("seed = true", "[generation] seed", ["whole number"]),
        ("cache = 0", "[generation] cache", ["true or false"]),
    ],
)
def test_generation_errors_point_at_generation_section(
    tmp_path: Path, line: str, key: str, fragments: list[str]
) -> None:
    path = _write(tmp_path / CONFIG_NAME, _multi_section(generation_line=line))

    message = _config_error(path)

    assert message.startswith(f"{path.resolve()}:{_GENERATION_LINE}: ")
    assert key in message
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    ("section", "line", "bound"),
    [
        # Tantivy reserves room for every hit asked for: a billion aborted the process.
        ("retrieval", "candidates = 1000000000", "<= 10000"),
        # Created up front: 100,000 ONNX Runtime threads took 16 GB before the first query.
        ("embedding", "threads = 100000", "<= 256"),
    ],
)
def test_resource_keys_are_bounded(tmp_path: Path, section: str, line: str, bound: str) -> None:
    path = _write(tmp_path / CONFIG_NAME, f"[{section}]\n{line}\n")

    message = _config_error(path)

    assert message.startswith(f"{path.resolve()}:2: [{section}] {line.partition(' ')[0]}")
    assert bound in message


def test_unknown_section_names_its_header_line(tmp_path: Path) -> None:
    text = "# comment\n[index]\npath = 'x'\n\n[retreival]\ntop_k = 3\n"
    path = _write(tmp_path / CONFIG_NAME, text)

    message = _config_error(path)

    assert message.startswith(f"{path.resolve()}:5: ")
    assert "unknown section [retreival]" in message
    assert "did you mean retrieval?" in message


def test_stray_top_level_key_names_its_own_line(tmp_path: Path) -> None:
    path = _write(tmp_path / CONFIG_NAME, "# comment\n\ntop_k = 3\n\n[retrieval]\nhybrid = true\n")

    message = _config_error(path)

    assert message.startswith(f"{path.resolve()}:3: ")
    assert "top_k" in message


def test_list_key_rejects_a_string(tmp_path: Path) -> None:
    path = _write(tmp_path / CONFIG_NAME, '[ingest]\nchunk_tokens = 128\npaths = "docs"\n')

    message = _config_error(path)

    assert message.startswith(f"{path.resolve()}:3: ")
    assert "[ingest] paths" in message
    assert "list of strings" in message


def test_invalid_toml_names_file_and_line(tmp_path: Path) -> None:
    text = "[index]\npath = 'x'\n\n[retrieval]\ntop_k = = 3\n"
    path = _write(tmp_path / CONFIG_NAME, text)

    message = _config_error(path)

    assert str(path.resolve()) in message
    assert "invalid TOML" in message
    assert "line 5" in message


# --- valid values ---------------------------------------------------------------------------------


def test_valid_values_round_trip(tmp_path: Path) -> None:
    text = """\
[index]
path = "store"

[ingest]
paths = ["docs", "notes"]
exclude = ["*.log"]
chunk_tokens = 300
max_file_mb = 0.5
follow_symlinks = true

[retrieval]
top_k = 1
hybrid = false
sufficiency_floor = 1.0
relevance_floor = 0.25
dedup_cosine = 0.0
graph_hops = 4

[generation]
model_path = "/models/x.gguf"
temperature = 0.0
seed = 42
"""
    config = load_config(explicit=_write(tmp_path / CONFIG_NAME, text))

    assert config.index.path == "store"
    assert config.ingest == IngestConfig(
        paths=["docs", "notes"], exclude=["*.log"], chunk_tokens=300, max_file_mb=0.5, follow_symlinks=True
    )
    assert config.retrieval == RetrievalConfig(
        top_k=1, hybrid=False, sufficiency_floor=1.0, relevance_floor=0.25, dedup_cosine=0.0, graph_hops=4
    )
    assert config.generation == GenerationConfig(model_path="/models/x.gguf", temperature=0.0, seed=42)
    # Sections the file does not mention keep their defaults.
    assert config.embedding == Config().embedding


def test_ints_are_accepted_for_float_keys(tmp_path: Path) -> None:
    text = "[retrieval]\ndedup_cosine = 1\nsufficiency_floor = 0\n\n[generation]\ntemperature = 2\n"
    config = load_config(explicit=_write(tmp_path / CONFIG_NAME, text))

    assert config.retrieval.dedup_cosine == 1.0
    assert isinstance(config.retrieval.dedup_cosine, float)
    assert config.retrieval.sufficiency_floor == 0.0
    assert isinstance(config.retrieval.sufficiency_floor, float)
    assert config.generation.temperature == 2.0
    assert isinstance(config.generation.temperature, float)


def test_empty_file_gives_defaults_with_source(tmp_path: Path) -> None:
    path = _write(tmp_path / CONFIG_NAME, "# nothing set\n")

    config = load_config(explicit=path)

    assert config.source == path.resolve()
    assert (config.index, config.ingest, config.embedding, config.retrieval, config.generation) == (
        Config().index,
        Config().ingest,
        Config().embedding,
        Config().retrieval,
        Config().generation,
    )


def test_absolute_index_path_is_used_even_without_a_config_file(tmp_path: Path) -> None:
    """An API caller (like `rag eval --index`) may set an absolute index path on default settings."""
    from raggity.config.schema import Config, IndexConfig  # noqa: PLC0415 - imported where the test needs it

    target = tmp_path / "elsewhere" / "idx"
    assert Config(index=IndexConfig(str(target))).index_dir == target
    assert Config().index_dir.name == "index"  # the data-home default stays for relative paths


def test_chunks_longer_than_the_embedder_input_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "raggity.toml"
    config.write_text("[ingest]\nchunk_tokens = 400\n\n[embedding]\nmax_tokens = 320\n")
    with pytest.raises(ConfigError, match=r"raggity\.toml:2: \[ingest\] chunk_tokens \(400\)"):
        load_config(config)


def test_a_key_outside_any_section_says_which_section_it_belongs_to(tmp_path: Path) -> None:
    config = tmp_path / "raggity.toml"
    config.write_text("# comment\ntop_k = 3\n\n[index]\npath = 'x'\n")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert "raggity.toml:2: key top_k must be inside a section" in caught.value.message
    assert caught.value.hint == "move it under [retrieval]"


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("index", "path", '"\\u0000"'),
        ("ingest", "paths", '["docs\\u0000"]'),
        ("ingest", "exclude", '["a\\u0000"]'),
    ],
)
def test_a_null_character_in_a_string_key_is_a_config_error_naming_it(
    tmp_path: Path, section: str, key: str, value: str
) -> None:
    """A NUL in a path reached the OS as "embedded null byte": an internal error, not a config one."""
    path = _write(tmp_path / CONFIG_NAME, f"[{section}]\n{key} = {value}\n")

    message = _config_error(path)

    assert message.startswith(f"{path.resolve()}:2: ")
    assert f"[{section}] {key}" in message
    assert "null character" in message
