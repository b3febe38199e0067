"""A remote index that cannot be reached, or refuses the credentials, is one error line without
secrets, from Lance's path (reading the table) and from the commit objects' path (boto3)."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import lance
import pytest

from raggity.core.errors import IndexLocationError
from raggity.store.object_store import S3Objects
from raggity.store.object_store_errors import lance_store_error
from raggity.store.uri import IndexLocation
from tests.scale.conftest import FAKE_CREDENTIALS, S3Server

SECRETS = (FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"], FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"])


def _lance_error(location: IndexLocation) -> IndexLocationError:
    with pytest.raises((ValueError, OSError)) as caught:
        lance.dataset(
            location.child("lancedb", "chunks.lance"), storage_options=dict(location.storage_options)
        )
    mapped = lance_store_error(caught.value, location)
    assert isinstance(mapped, IndexLocationError)
    return mapped


def _one_clean_line(error: IndexLocationError) -> str:
    message = str(error)
    assert "\n" not in message
    assert len(message) < 300
    for secret in SECRETS:
        assert secret not in message
    return message


def test_an_unreachable_endpoint_is_one_line_from_lance(s3: S3Server) -> None:
    location = IndexLocation(
        f"s3://{s3.bucket}/x", {"endpoint": "http://127.0.0.1:9", "region": "us-east-1", "allow_http": "true"}
    )
    assert "unreachable" in _one_clean_line(_lance_error(location))


@pytest.fixture
def enforcing(s3: S3Server) -> Iterator[S3Server]:
    """The server checking credentials from now on (moto's reset-auth switch), then open again."""

    def set_free_actions(count: str) -> None:
        request = urllib.request.Request(
            f"{s3.endpoint}/moto-api/reset-auth",
            data=count.encode(),
            method="POST",
            headers={"Content-Type": "text/plain"},  # a form body would not reach moto's request.data
        )
        with urllib.request.urlopen(request, timeout=10):
            pass

    set_free_actions("0")
    try:
        yield s3
    finally:
        set_free_actions("inf")


def test_refused_credentials_are_one_line_from_lance_and_from_the_commit_objects(enforcing: S3Server) -> None:
    location = IndexLocation(enforcing.prefix(), enforcing.storage_options)
    assert "refused the credentials" in _one_clean_line(_lance_error(location))
    with pytest.raises(IndexLocationError) as caught:
        S3Objects(location).get("CURRENT")
    assert "refused the credentials" in _one_clean_line(caught.value)


def test_errors_that_are_not_the_stores_are_left_to_the_caller() -> None:
    remote = IndexLocation("s3://bucket/p")
    assert lance_store_error(ValueError("Dataset at path p was not found: Not found"), remote) is None
    assert lance_store_error(KeyError("x"), remote) is None
    assert lance_store_error(ValueError("error sending request"), IndexLocation("/local/index")) is None
