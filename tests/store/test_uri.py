"""`[index] path` as a local folder or an object-store URI; credentials never from the config, never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from raggity.core.errors import ConfigError
from raggity.store.uri import IndexLocation, parse_index_location, redact


def test_a_relative_path_is_a_local_folder_under_the_config_folder(tmp_path: Path) -> None:
    location = parse_index_location("index", {}, base_dir=tmp_path)
    assert not location.on_object_store
    assert location.local_path == (tmp_path / "index").resolve()
    assert location.storage_options == {}


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("s3://team-bucket/docs/index/", "s3://team-bucket/docs/index"),
        ("S3://team-bucket", "s3://team-bucket"),
        ("gs://b/p", "gs://b/p"),
        ("az://container/p", "az://container/p"),
    ],
)
def test_object_store_uris_keep_bucket_and_prefix(tmp_path: Path, path: str, uri: str) -> None:
    location = parse_index_location(path, {"region": "eu-west-1", "allow_http": True}, base_dir=tmp_path)
    assert location.on_object_store
    assert location.uri == uri
    assert location.storage_options == {"region": "eu-west-1", "allow_http": "true"}


def test_entries_inside_a_remote_index() -> None:
    location = IndexLocation("s3://bucket/team/index")
    assert location.child("lancedb") == "s3://bucket/team/index/lancedb"
    assert location.bucket_and_key("manifest.json") == ("bucket", "team/index/manifest.json")


@pytest.mark.parametrize(
    "key", ["aws_secret_access_key", "access_key_id", "session_token", "azure_storage_account_key", "SAS"]
)
def test_a_credential_in_the_storage_table_is_refused_without_echoing_it(tmp_path: Path, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_index_location("s3://b/p", {key: "hunter2-very-secret"}, base_dir=tmp_path)
    assert "hunter2" not in str(caught.value)
    assert key in str(caught.value)


def test_credentials_in_the_uri_are_refused_without_echoing_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_index_location("s3://AKIAEXAMPLE:hunter2@bucket/p", {}, base_dir=tmp_path)
    assert "hunter2" not in str(caught.value)
    assert "AKIAEXAMPLE" not in str(caught.value)


@pytest.mark.parametrize("path", ["ftp://host/p", "hdfs://nn/p", "s3:///prefix-only"])
def test_unsupported_or_bucketless_uris_are_config_errors(tmp_path: Path, path: str) -> None:
    with pytest.raises(ConfigError):
        parse_index_location(path, {}, base_dir=tmp_path)


def test_storage_options_for_a_local_folder_are_a_mistake(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[index.storage\]"):
        parse_index_location("index", {"region": "x"}, base_dir=tmp_path)


def test_redact_removes_environment_secrets_signed_parameters_and_userinfo() -> None:
    env = {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG", "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7"}
    message = (
        "Generic S3 error: request to https://user:pw@host/b/k?X-Amz-Credential=AKIAIOSFODNN7%2F2026"
        "&X-Amz-Signature=abc123 failed; secret_access_key=wJalrXUtnFEMI/K7MDENG, "
        '{"session_token": "FQoGZXIvYXdzEJr"}'
    )
    cleaned = redact(message, env)
    for secret in ("wJalrXUtnFEMI", "AKIAIOSFODNN7", "abc123", "user:pw", "FQoGZXIvYXdzEJr"):
        assert secret not in cleaned
    assert cleaned.startswith("Generic S3 error: request to https://***@host/b/k?")


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("connect to http://alice:Passw0rd@127.0.0.1:5055 failed", "http://***@127.0.0.1:5055 failed"),
        # A "/" in the password ends the authority for any URL parser: the password still goes.
        (
            "error sending request for url (http://alice:Pa/ssw0rd@127.0.0.1:5055/b/k)",
            "http://***@127.0.0.1:5055/b/k)",
        ),
        ("url (http://alice:Pa@ssw0rd@127.0.0.1:5055/b)", "http://***@127.0.0.1:5055/b)"),
        ("url http://alice:Pa ssw0rd@127.0.0.1:5055/b: refused", "http://***@127.0.0.1:5055/b: refused"),
        ("url http://alice:Pa%2Fssw0rd%40x@127.0.0.1:5055", "http://***@127.0.0.1:5055"),
        ("url http://alice:Passw0rd@[::1]:5055/b", "http://***@[::1]:5055/b"),
        ("two: https://alice:Passw0rd@h1/x and s3://bob:ssw0rd@h2/y", "https://***@h1/x and s3://***@h2/y"),
        ('{"endpoint": "http://alice:Pa\\"ssw0rd@127.0.0.1"}', 'http://***@127.0.0.1"}'),
    ],
)
def test_redact_takes_out_userinfo_whatever_the_password_holds(message: str, kept: str) -> None:
    cleaned = redact(message, {})
    assert "ssw0rd" not in cleaned
    assert "alice" not in cleaned
    assert cleaned.endswith(kept)


@pytest.mark.parametrize(
    "message",
    [
        "s3://bucket/team/index: object store error: 404",
        "http://127.0.0.1:5055/bucket?x=1 timed out",
        "http://[::1]:9000/ refused\nsee a@b on the next line",
        "no URL here, only a@b",
        "://@@@ garbage :// @",
    ],
)
def test_redact_leaves_urls_without_userinfo_as_they_are(message: str) -> None:
    assert redact(message, {}) == message
