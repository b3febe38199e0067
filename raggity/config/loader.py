"""Find raggity.toml, parse it, validate every key with messages that name file, line and key, and
refuse values that reach outside a found config's folder until the user trusts it."""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raggity.config.location import storage_options
from raggity.config.schema import SECTIONS, Config
from raggity.config.trust import TrustStore, content_hash, owned_by_someone_else, reaching_keys
from raggity.config.urls import check_url
from raggity.core.errors import ConfigError

CONFIG_NAME = "raggity.toml"
CONFIG_ENV = "RAGGITY_CONFIG"


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    # Found by walking up from the current folder, rather than named by --config or $RAGGITY_CONFIG:
    # it may belong to whoever made the folder, so it needs trust to reach outside it.
    found: bool


def locate_config(explicit: Path | None = None, start: Path | None = None) -> ConfigFile | None:
    """--config, then $RAGGITY_CONFIG, then raggity.toml in the current folder or any parent."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"{explicit}: config file not found", "check the --config path")
        return ConfigFile(explicit.resolve(), found=False)
    env = os.environ.get(CONFIG_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"{path}: config file named by ${CONFIG_ENV} not found", f"fix or unset {CONFIG_ENV}"
            )
        return ConfigFile(path.resolve(), found=False)
    found = search_up(start or Path.cwd())
    return ConfigFile(found, found=True) if found else None


def search_up(start: Path) -> Path | None:
    """raggity.toml in `start` or its nearest parent that has one."""
    folder = start.resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / CONFIG_NAME
        if path.is_file():
            return path
    return None


def find_config_file(explicit: Path | None = None, start: Path | None = None) -> Path | None:
    located = locate_config(explicit, start)
    return located.path if located else None


def load_config(explicit: Path | None = None, start: Path | None = None) -> Config:
    located = locate_config(explicit, start)
    if located is None:
        return Config()
    path = located.path
    raw = read_config_bytes(path)
    raw_text = raw.decode("utf-8")
    config = parse_config(raw_text, path)
    if located.found:
        _require_trust(config, path, raw, _KeyLocator(raw_text))
    return config


def read_config_bytes(path: Path) -> bytes:
    """The file's bytes, checked to be UTF-8: what is parsed is exactly what is hashed for trust."""
    try:
        raw = path.read_bytes()
        raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from exc
    return raw


def _require_trust(config: Config, path: Path, raw: bytes, locate: _KeyLocator) -> None:
    """A found config may reach outside its folder only if the user trusted exactly this content."""
    reaching = reaching_keys(config)
    if not reaching:
        return
    owner = owned_by_someone_else(path)
    recorded = TrustStore().digest(path)
    if owner is None and recorded == content_hash(raw):
        return
    if owner is not None:
        why = f", and this one belongs to another user (uid {owner})"
        fix = "copy it to a file of your own and pass that with --config"
    else:
        why = " again: it changed since you trusted it" if recorded else ""
        fix = f"review it, then run `rag trust {path}`, or pass it with --config"
    first = reaching[0]
    more = f" (and {len(reaching) - 1} more)" if len(reaching) > 1 else ""
    raise ConfigError(
        f"{path}:{locate.key(first.section, first.key)}: {first}{more} reaches outside this folder; "
        f"a config found by searching up from the current folder may do that only once you trust it{why}",
        fix,
    )


def parse_config(raw_text: str, path: Path) -> Config:
    try:
        data = tomllib.loads(raw_text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", "fix the syntax at that line") from exc
    locate = _KeyLocator(raw_text)
    sections: dict[str, Any] = {}
    for name, value in data.items():
        if not isinstance(value, dict):
            home = [
                section
                for section, cls in SECTIONS.items()
                if name in {f.name for f in dataclasses.fields(cls)}
            ]
            raise ConfigError(
                f"{path}:{locate.key('', name)}: key {name} must be inside a section",
                f"move it under [{home[0]}]"
                if home
                else "put it under one of " + ", ".join(f"[{s}]" for s in SECTIONS),
            )
        if name not in SECTIONS:
            # A stray top-level key has no [header] line: locate it as a key, not a section.
            line = locate.section(name) if isinstance(value, dict) else locate.key("", name)
            raise ConfigError(
                f"{path}:{line}: unknown section [{name}]{_suggest(name, SECTIONS)}",
                f"sections are {', '.join('[' + s + ']' for s in SECTIONS)}",
            )
        sections[name] = _build_section(name, value, path, locate)
    config = Config(**sections, source=path.resolve())
    try:
        config.index_location  # noqa: B018 - validates [index] path as a folder or a URI
    except ConfigError as exc:
        raise ConfigError(f"{path}:{locate.key('index', 'path')}: {exc.message}", exc.hint) from None
    if config.ingest.chunk_tokens > config.embedding.max_tokens - 2:
        raise ConfigError(
            f"{path}:{locate.key('ingest', 'chunk_tokens')}: [ingest] chunk_tokens ({config.ingest.chunk_tokens}) "
            f"must leave 2 tokens below [embedding] max_tokens ({config.embedding.max_tokens})",
            "lower chunk_tokens or raise max_tokens (at most 512)",
        )
    return config


def _build_section(name: str, values: dict[str, Any], path: Path, locate: _KeyLocator) -> Any:
    cls = SECTIONS[name]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        where = f"{path}:{locate.key(name, key)}"
        if key not in fields:
            raise ConfigError(
                f"{where}: unknown key [{name}] {key}{_suggest(key, fields)}",
                "`rag init FILE` writes every key with its default; see docs/configuration.md",
            )
        field = fields[key]
        if isinstance(value, dict):
            kwargs[key] = _check_table(value, field, path, locate, f"{name}.{key}")
            continue
        kwargs[key] = _check_value(value, field, f"{where}: [{name}] {key}")
    return cls(**kwargs)


def _check_value(value: Any, field: dataclasses.Field[Any], label: str) -> Any:
    expected = field.type if isinstance(field.type, str) else field.type.__name__
    lo, hi = field.metadata.get("lo"), field.metadata.get("hi")
    if expected == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{label} must be true or false, got {value!r}")
        return value
    if expected == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{label} must be a whole number, got {value!r}")
    elif expected == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{label} must be a number, got {value!r}")
        value = float(value)
        if math.isnan(value):  # nan compares false with both bounds and would pass the range check
            raise ConfigError(f"{label} must be a number, got nan")
    elif expected == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{label} must be a string, got {value!r}")
        choices = field.metadata.get("choices")
        if choices and value not in choices:
            raise ConfigError(f"{label} must be one of {', '.join(choices)}, got {value!r}")
        if field.metadata.get("url") and value:
            return check_url(value, label)
        return _without_nul(value, label)
    elif expected == "dict[str, str]":
        raise ConfigError(f"{label} must be a table, e.g. [index.storage], got {value!r}")
    elif expected == "list[str]":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{label} must be a list of strings, got {value!r}")
        return [_without_nul(v, label) for v in value]
    if lo is not None and value < lo:
        raise ConfigError(f"{label} must be >= {_num(lo)}{_range_tail(hi)}, got {value!r}")
    if hi is not None and value > hi:
        raise ConfigError(f"{label} must be <= {_num(hi)}, got {value!r}")
    return value


def _check_table(
    value: dict[str, Any], field: dataclasses.Field[Any], path: Path, locate: _KeyLocator, table: str
) -> dict[str, str]:
    """A table-valued key ([index.storage]): connection options, refused (at the offending key's
    line) if one names a secret."""
    expected = field.type if isinstance(field.type, str) else field.type.__name__
    if expected != "dict[str, str]":
        raise ConfigError(f"{path}:{locate.section(table)}: [{table}] must be a value, not a table")
    options: dict[str, str] = {}
    for name, item in value.items():
        try:
            options.update(storage_options({name: item}))
        except ConfigError as exc:
            raise ConfigError(f"{path}:{locate.key(table, name)}: {exc.message}", exc.hint) from None
    return options


def _without_nul(value: str, label: str) -> str:
    """A null character cannot be in a path, model name or glob: the OS would refuse it much later
    with "embedded null byte", an internal error instead of one naming the key."""
    if "\x00" in value:
        raise ConfigError(f"{label} must not contain a null character (\\u0000)", "remove it from the value")
    return value


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _range_tail(hi: float | None) -> str:
    return f" and <= {_num(hi)}" if hi is not None else ""


def _suggest(word: str, options: Any) -> str:
    close = difflib.get_close_matches(word, list(options), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


class _KeyLocator:
    """Finds the line of a key in the raw text; tomllib does not report positions."""

    _HEADER = re.compile(r"^\s*\[\s*([^\]\s]+)\s*\]")
    # A bare key, or a quoted one (which may hold spaces, dots and escapes: "aws_session_token ").
    _KEY = re.compile(r"""^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_\-]+)\s*=""")

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()

    def section(self, name: str) -> int:
        for number, line in enumerate(self._lines, start=1):
            match = self._HEADER.match(line)
            if match and match.group(1) == name:
                return number
        return 1

    def key(self, section: str, key: str) -> int:
        line = self._find(section, key)
        if line is None and "." in section:
            # An inline table (storage = { ... } under [index]): the line of the table's own key.
            parent, _, name = section.rpartition(".")
            line = self._find(parent, name)
        return line if line is not None else self.section(section)

    def _find(self, section: str, key: str) -> int | None:
        current = ""
        for number, line in enumerate(self._lines, start=1):
            header = self._HEADER.match(line)
            if header:
                current = header.group(1)
                continue
            match = self._KEY.match(line)
            if match and current == section and _key_name(match.group(1)) == key:
                return number
        return None


def _key_name(token: str) -> str | None:
    """The key a bare or quoted TOML key token names, escapes decoded as tomllib decodes them."""
    if not token.startswith(("'", '"')):
        return token
    try:
        return next(iter(tomllib.loads(f"{token} = 0")))
    except (tomllib.TOMLDecodeError, StopIteration):
        return None
