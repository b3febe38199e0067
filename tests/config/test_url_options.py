"""URL-valued settings ([index.storage] endpoints, [index] path, [ingest] ray_address) never hold a
user name, a password, spaces or control characters; the error names file, line and key, and never
quotes the value. Also: a quoted key is reported at its own line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raggity.config import CONFIG_NAME, load_config
from raggity.core.errors import ConfigError
from tests.support import assert_clean_error, rag

PASSWORD = "Passw0rd"
USERINFO = "a URL must not hold a user name or password"


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / CONFIG_NAME
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(explicit=path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:")
    return message


def _storage(key: str, value: str) -> str:
    # A JSON string is a TOML basic string: control characters travel as escapes.
    return f'[index]\npath = "s3://bucket/docs"\n\n[index.storage]\nregion = "eu-west-1"\n{key} = {json.dumps(value)}\n'


@pytest.mark.parametrize(
    "endpoint",
    [
        f"http://alice:{PASSWORD}@127.0.0.1:5055",
        f"http://alice:Pa/ss{PASSWORD}@127.0.0.1:5055",  # "/" ends the authority for a parser
        f"http://alice:Pa@ss{PASSWORD}@127.0.0.1:5055",
        f"http://alice:Pa%2F{PASSWORD}@127.0.0.1:5055",  # percent-encoded
        f"http://alice:{PASSWORD}@[::1]:5055",  # IPv6 host
        f"http://alice:{PASSWORD}?@127.0.0.1:5055",
        f"alice:{PASSWORD}@127.0.0.1:5055",  # no scheme
        f"https://{PASSWORD}@s3.example.com",  # a token as the user name
    ],
)
def test_userinfo_in_an_endpoint_is_refused_at_its_line_without_echoing_it(
    tmp_path: Path, endpoint: str
) -> None:
    message = _error(tmp_path, _storage("endpoint", endpoint))
    assert f":6: [index.storage] endpoint: {USERINFO}" in message
    assert PASSWORD not in message
    assert "alice" not in message
    assert "AWS_ACCESS_KEY_ID" in message  # the fix says where credentials belong


@pytest.mark.parametrize("key", ["aws_endpoint", "proxy_url", "azure_storage_endpoint", "my_option"])
def test_every_url_valued_storage_option_is_checked(tmp_path: Path, key: str) -> None:
    message = _error(tmp_path, _storage(key, f"http://alice:{PASSWORD}@127.0.0.1:5055"))
    assert f":6: [index.storage] {key}: {USERINFO}" in message
    assert PASSWORD not in message


@pytest.mark.parametrize(
    "endpoint",
    [
        f"http://alice:Pa ss{PASSWORD}@127.0.0.1:5055",
        "http://127.0.0.1:5055 ",
        "http://127.0.0.1:5055\t",
        "http://127.0.0.1\u202e:5055",  # a bidi control
        "http://127.0.0.1\u00a0:5055",  # a no-break space
        "http://127.0.0.1:5055\n",
    ],
)
def test_spaces_and_control_characters_in_an_endpoint_are_refused(tmp_path: Path, endpoint: str) -> None:
    message = _error(tmp_path, _storage("endpoint", endpoint))
    assert ":6: [index.storage] endpoint: a URL must not contain spaces or control characters" in message
    assert PASSWORD not in message


@pytest.mark.parametrize("endpoint", ["http://[::1", "http://127.0.0.1:99999"])
def test_an_endpoint_that_does_not_parse_is_refused(tmp_path: Path, endpoint: str) -> None:
    assert ":6: [index.storage] endpoint: not a valid URL" in _error(tmp_path, _storage("endpoint", endpoint))


@pytest.mark.parametrize(
    "endpoint",
    ["http://127.0.0.1:5055", "http://[::1]:9000/", "https://s3.eu-west-1.amazonaws.com", "localhost:9000"],
)
def test_plain_endpoints_are_taken_as_written(tmp_path: Path, endpoint: str) -> None:
    path = tmp_path / CONFIG_NAME
    path.write_text(_storage("endpoint", endpoint), encoding="utf-8")
    assert load_config(explicit=path).index_location.storage_options["endpoint"] == endpoint


def test_a_password_holding_a_slash_in_the_index_uri_is_refused(tmp_path: Path) -> None:
    message = _error(tmp_path, f'[index]\npath = "s3://AKIAEXAMPLE:Pa/{PASSWORD}@bucket/p"\n')
    assert f":2: [index] path: {USERINFO}" in message
    assert PASSWORD not in message
    assert "AKIAEXAMPLE" not in message


def test_an_index_prefix_may_hold_a_space_but_no_control_character(tmp_path: Path) -> None:
    path = tmp_path / CONFIG_NAME
    path.write_text('[index]\npath = "s3://bucket/team notes"\n', encoding="utf-8")
    assert load_config(explicit=path).index_location.uri == "s3://bucket/team notes"
    message = _error(tmp_path, '[index]\npath = "s3://bucket/team\\u0007notes"\n')
    assert ":2: [index] path: a URL must not contain control characters" in message


@pytest.mark.parametrize(
    "address", [f"ray://alice:{PASSWORD}@127.0.0.1:10001", f"alice:Pa/{PASSWORD}@head:6379"]
)
def test_userinfo_in_the_ray_address_is_refused(tmp_path: Path, address: str) -> None:
    message = _error(tmp_path, f'[ingest]\nray_address = "{address}"\n')
    assert f":2: [ingest] ray_address: {USERINFO}" in message
    assert PASSWORD not in message


@pytest.mark.parametrize("address", ["auto", "127.0.0.1:6379", "ray://127.0.0.1:10001", ""])
def test_plain_ray_addresses_are_taken(tmp_path: Path, address: str) -> None:
    path = tmp_path / CONFIG_NAME
    path.write_text(f'[ingest]\nray_address = "{address}"\n', encoding="utf-8")
    assert load_config(explicit=path).ingest.ray_address == address


# --- a quoted key is reported at its own line ----------------------------------------------------


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ('"aws_session_token "', "aws_session_token "),
        ("'SESSION token'", "SESSION token"),
        ('"sas\\u0020x"', "sas x"),
    ],
)
def test_a_quoted_key_is_reported_at_its_own_line(tmp_path: Path, key: str, name: str) -> None:
    message = _error(
        tmp_path, f'[index]\npath = "s3://b/p"\n\n[index.storage]\nregion = "eu-west-1"\n\n{key} = "abc"\n'
    )
    assert f":7: [index.storage] {name}: credentials are not read from raggity.toml" in message


def test_a_key_of_an_inline_storage_table_is_reported_at_the_tables_line(tmp_path: Path) -> None:
    text = (
        f'[index]\npath = "s3://b/p"\n# the options:\nstorage = {{ endpoint = "http://u:{PASSWORD}@h:1" }}\n'
    )
    message = _error(tmp_path, text)
    assert f":4: [index.storage] endpoint: {USERINFO}" in message


# --- on the command line -------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["trust", "raggity.toml"], ["status"], ["ingest", "docs"]])
@pytest.mark.parametrize("password", [PASSWORD, f"Pa/{PASSWORD}", f"Pa ss{PASSWORD}"])
def test_commands_refuse_the_config_in_one_line_that_names_the_key(
    tmp_path: Path, command: list[str], password: str
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Herons nest near water.\n", encoding="utf-8")
    (tmp_path / CONFIG_NAME).write_text(
        _storage("endpoint", f"http://alice:{password}@127.0.0.1:5055") + "allow_http = true\n",
        encoding="utf-8",
    )
    result = rag(*command, cwd=tmp_path)
    assert result.returncode != 0
    line = assert_clean_error(result.stderr)
    assert f"{CONFIG_NAME}:6: [index.storage] endpoint: a URL must not" in line
    assert PASSWORD not in result.stdout + result.stderr
    assert "Panic" not in result.stderr
