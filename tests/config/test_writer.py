"""The starter raggity.toml from raggity.config.writer and the repo's raggity.toml.example."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from raggity.config import CONFIG_NAME, Config, load_config
from raggity.config.schema import SECTIONS
from raggity.config.writer import starter_toml

EXAMPLE = Path(__file__).resolve().parents[2] / "raggity.toml.example"
_KEY_LINE = re.compile(r"^([a-z0-9_]+) = ")


def _default(field: dataclasses.Field[object]) -> object:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def test_starter_lists_every_section_and_key_with_its_default() -> None:
    data = tomllib.loads(starter_toml())

    assert list(data) == list(SECTIONS)
    for name, cls in SECTIONS.items():
        fields = dataclasses.fields(cls)
        assert list(data[name]) == [f.name for f in fields], name
        for field in fields:
            assert data[name][field.name] == _default(field), f"[{name}] {field.name}"


def test_starter_builds_a_config_equal_to_defaults() -> None:
    data = tomllib.loads(starter_toml())

    built = Config(**{name: cls(**data[name]) for name, cls in SECTIONS.items()})

    assert built == Config()


def test_starter_loads_through_the_validator_as_defaults(tmp_path: Path) -> None:
    path = tmp_path / CONFIG_NAME
    path.write_text(starter_toml(), encoding="utf-8")

    config = load_config(explicit=path)

    assert dataclasses.replace(config, source=None) == Config()
    assert config.source == path.resolve()


def test_every_key_is_preceded_by_its_help_comment() -> None:
    lines = starter_toml().splitlines()
    help_by_key = {
        (name, f.name): f.metadata["help"] for name, cls in SECTIONS.items() for f in dataclasses.fields(cls)
    }

    seen: list[tuple[str, str]] = []
    section = ""
    for number, line in enumerate(lines):
        if line.startswith("["):
            section = line.strip("[]")
            if "." not in section:
                continue
            # A table-valued key ([index.storage]): its header line is the key's line.
            key = tuple(section.split(".", 1))
        elif match := _KEY_LINE.match(line):
            key = (section, match.group(1))
        else:
            continue
        assert len(key) == 2
        seen.append((key[0], key[1]))
        previous = lines[number - 1]
        assert previous.startswith("# "), f"{key} has no comment line before it"
        assert previous == f"# {help_by_key[seen[-1]]}"
    assert seen == list(help_by_key)


def test_repo_example_equals_starter() -> None:
    """raggity.toml.example is generated; regenerate it when a key changes:
    python -c "from raggity.config.writer import starter_toml; open('raggity.toml.example','w').write(starter_toml())"
    """
    assert EXAMPLE.is_file()
    assert EXAMPLE.read_text(encoding="utf-8") == starter_toml()
