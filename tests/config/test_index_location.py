"""`[index] path` as an object-store URI with `[index.storage]` options, `[ingest] engine`, and the
credentials raggity.toml may never hold (docs/scaling.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from raggity.config import CONFIG_NAME, load_config
from raggity.core.errors import ConfigError


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / CONFIG_NAME
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(explicit=path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:")
    return message


def test_an_s3_path_with_storage_options_is_an_index_location(tmp_path: Path) -> None:
    config = load_config(
        explicit=_write(
            tmp_path,
            '[index]\npath = "s3://team-bucket/raggity/docs/"\n\n[index.storage]\n'
            'endpoint = "http://127.0.0.1:9000"\nregion = "eu-west-1"\nallow_http = true\n',
        )
    )
    location = config.index_location
    assert location.on_object_store
    assert location.uri == "s3://team-bucket/raggity/docs"
    assert dict(location.storage_options) == {
        "endpoint": "http://127.0.0.1:9000",
        "region": "eu-west-1",
        "allow_http": "true",
    }
    # The local state of a remote index (its answer cache) is a folder of this user's, not the URI.
    assert "://" not in str(config.index_dir)
    assert config.index_dir != (tmp_path / "s3:").resolve()


@pytest.mark.parametrize("scheme", ["gs", "az"])
def test_gs_and_az_uris_are_accepted(tmp_path: Path, scheme: str) -> None:
    config = load_config(explicit=_write(tmp_path, f'[index]\npath = "{scheme}://b/p"\n'))
    assert config.index_location.uri == f"{scheme}://b/p"


def test_a_local_path_stays_a_folder_next_to_the_file(tmp_path: Path) -> None:
    config = load_config(explicit=_write(tmp_path, '[index]\npath = "idx"\n'))
    assert not config.index_location.on_object_store
    assert config.index_location.local_path == (tmp_path / "idx").resolve() == config.index_dir


@pytest.mark.parametrize("name", ["aws_secret_access_key", "access_key_id", "session_token", "sas_token"])
def test_a_credential_in_index_storage_is_refused_without_echoing_it(tmp_path: Path, name: str) -> None:
    message = _error(
        tmp_path, f'[index]\npath = "s3://b/p"\n\n[index.storage]\n{name} = "hunter2-very-secret"\n'
    )
    assert f":5: [index.storage] {name}: credentials are not read from raggity.toml" in message
    assert "hunter2" not in message
    assert "AWS_ACCESS_KEY_ID" in message  # the fix names where credentials belong


def test_a_password_in_the_uri_is_refused_without_echoing_it(tmp_path: Path) -> None:
    message = _error(tmp_path, '[index]\npath = "s3://me:hunter2-very-secret@bucket/p"\n')
    assert ":2: [index] path: a URL must not hold a user name or password" in message
    assert "hunter2" not in message


def test_an_unknown_scheme_and_a_missing_bucket_name_the_key(tmp_path: Path) -> None:
    assert "unsupported scheme ftp://" in _error(tmp_path, '[index]\npath = "ftp://host/p"\n')
    assert "names no bucket" in _error(tmp_path, '[index]\npath = "s3:///p"\n')


def test_storage_options_for_a_local_folder_are_refused(tmp_path: Path) -> None:
    message = _error(tmp_path, '[index]\npath = "idx"\n\n[index.storage]\nregion = "eu-west-1"\n')
    assert "[index.storage] is set but [index] path is a local folder" in message


def test_storage_must_be_a_table_of_plain_values(tmp_path: Path) -> None:
    assert "must be a table" in _error(tmp_path, '[index]\npath = "s3://b/p"\nstorage = "x"\n')
    assert "must be a string, number or true/false" in _error(
        tmp_path, '[index]\npath = "s3://b/p"\n\n[index.storage]\nregion = ["a"]\n'
    )


def test_the_ingest_engine_is_local_or_ray(tmp_path: Path) -> None:
    assert load_config(explicit=_write(tmp_path, "")).ingest.engine == "local"
    config = load_config(explicit=_write(tmp_path, '[ingest]\nengine = "ray"\nray_address = "auto"\n'))
    assert (config.ingest.engine, config.ingest.ray_address) == ("ray", "auto")
    assert "must be one of local, ray" in _error(tmp_path, '[ingest]\nengine = "spark"\n')


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / CONFIG_NAME
    path.write_text(text, encoding="utf-8")
    return path
