"""The lease and CURRENT of an az:// index: Azure Blob Storage's own conditional requests.

Create-if-absent is a Put Blob with `If-None-Match: *` (the SDK's `overwrite=False`); compare-and-swap
and the lease's release are `If-Match: <etag>`. Azure Storage and Azurite honour both (a lost race is
409 BlobAlreadyExists or 412 ConditionNotMet, both PreconditionFailedError here).

Where things come from, as for Lance's own Azure client (docs/scaling.md):
- the account: `[index.storage] account_name`, else AZURE_STORAGE_ACCOUNT_NAME;
- the endpoint: `[index.storage] endpoint` (Azurite, a sovereign cloud), else the account's public one;
- the credential: AZURE_STORAGE_ACCOUNT_KEY, else AZURE_STORAGE_SAS_TOKEN, else azure-identity's
  DefaultAzureCredential when it is installed. Never raggity.toml, never printed.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from raggity.core.errors import IndexLocationError, RaggityError
from raggity.core.extras import require
from raggity.store.object_store import PreconditionFailedError, StoredObject
from raggity.store.uri import IndexLocation, redact

_CONNECT_SECONDS = 5
_READ_SECONDS = 30


class AzureContainer:
    """Objects under one index's prefix in an Azure Blob Storage container."""

    def __init__(self, location: IndexLocation, *, service: Any | None = None) -> None:
        require("azure.storage.blob", "an index on Azure Blob Storage")
        self._location = location
        container, self._prefix = location.bucket_and_key()
        self._container = (service or _service(location)).get_container_client(container)

    def _key(self, name: str) -> str:
        return f"{self._prefix}/{name}" if self._prefix else name

    def create(self, name: str, body: bytes) -> str:
        return self._put(name, body, overwrite=False)

    def replace(self, name: str, body: bytes, etag: str) -> str:
        from azure.core import MatchConditions  # noqa: PLC0415 - only an az:// index loads the SDK

        return self._put(name, body, overwrite=True, etag=etag, match_condition=MatchConditions.IfNotModified)

    def get(self, name: str) -> StoredObject | None:
        from azure.core.exceptions import ResourceNotFoundError  # noqa: PLC0415 - as above

        try:
            found = self._container.get_blob_client(self._key(name)).download_blob()
            body = found.readall()
        except ResourceNotFoundError as exc:
            if _code(exc) == "ContainerNotFound":
                raise azure_error(exc, self._location) from None
            return None
        except Exception as exc:
            raise azure_error(exc, self._location) from None
        return StoredObject(body, str(found.properties.etag))

    def names(self, prefix: str) -> list[str]:
        base = len(self._key(""))
        try:
            return [str(blob.name)[base:] for blob in self._container.list_blobs(self._key(prefix))]
        except Exception as exc:
            raise azure_error(exc, self._location) from None

    def delete(self, name: str, etag: str) -> None:
        from azure.core import MatchConditions  # noqa: PLC0415 - only an az:// index loads the SDK
        from azure.core.exceptions import ResourceModifiedError, ResourceNotFoundError  # noqa: PLC0415

        blob = self._container.get_blob_client(self._key(name))
        try:
            blob.delete_blob(etag=etag, match_condition=MatchConditions.IfNotModified)
        except ResourceModifiedError:
            # Azure answers If-Match on a missing blob with 412 too: missing is already deleted.
            if self.get(name) is not None:
                raise PreconditionFailedError(name) from None
        except ResourceNotFoundError as exc:
            if _code(exc) == "ContainerNotFound":
                raise azure_error(exc, self._location) from None
        except Exception as exc:
            raise azure_error(exc, self._location) from None

    def _put(self, name: str, body: bytes, **condition: Any) -> str:
        from azure.core.exceptions import (  # noqa: PLC0415 - only an az:// index loads the SDK
            ResourceExistsError,
            ResourceModifiedError,
            ResourceNotFoundError,
        )

        try:
            done = self._container.get_blob_client(self._key(name)).upload_blob(body, **condition)
        except (ResourceExistsError, ResourceModifiedError):
            raise PreconditionFailedError(name) from None
        except ResourceNotFoundError as exc:
            if _code(exc) == "ContainerNotFound":
                raise azure_error(exc, self._location) from None
            raise PreconditionFailedError(name) from None  # replaced an object deleted meanwhile
        except Exception as exc:
            raise azure_error(exc, self._location) from None
        return str(done["etag"])


def _code(exc: Any) -> str:
    """The service's error code ("ContainerNotFound"); the SDK gives it as a str enum or a str."""
    code = getattr(exc, "error_code", None) or ""
    return str(getattr(code, "value", code))


def azure_error(exc: BaseException, location: IndexLocation) -> RaggityError:
    """One line for the user, with no secret in it: unreachable, refused credentials, no container."""
    from azure.core.exceptions import (  # noqa: PLC0415 - only an az:// index loads the SDK
        ClientAuthenticationError,
        ServiceRequestError,
    )

    code = _code(exc)
    refused = code.startswith("Authorization") or code in (
        "AuthenticationFailed",
        "InvalidAuthenticationInfo",
    )
    if isinstance(exc, ClientAuthenticationError) or refused or getattr(exc, "status_code", 0) in (401, 403):
        return IndexLocationError(
            f"{location.uri}: the object store refused the credentials ({code or 'authentication'})",
            "check AZURE_STORAGE_ACCOUNT_KEY (or the SAS token or identity) and its access to the container",
        )
    if code == "ContainerNotFound":
        return IndexLocationError(f"{location.uri}: no such container", "create it, or fix [index] path")
    if isinstance(exc, ServiceRequestError):
        return IndexLocationError(
            f"{location.uri}: the object store is unreachable",
            "check [index.storage] endpoint and the network",
        )
    first = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    return IndexLocationError(
        f"{location.uri}: object store error: {redact(first)}", "retry, or check the store"
    )


def _service(location: IndexLocation, environ: Mapping[str, str] | None = None) -> Any:
    from azure.storage.blob import BlobServiceClient  # noqa: PLC0415 - only an az:// index loads the SDK

    env = os.environ if environ is None else environ
    options = location.storage_options
    account = _option(options, "account_name") or env.get("AZURE_STORAGE_ACCOUNT_NAME", "")
    if not account:
        raise IndexLocationError(
            f"{location.uri}: no Azure storage account named",
            "set [index.storage] account_name (or AZURE_STORAGE_ACCOUNT_NAME in the environment)",
        )
    endpoint = _option(options, "endpoint") or f"https://{account}.blob.core.windows.net"
    return BlobServiceClient(
        endpoint.rstrip("/"),
        credential=_credential(location, account, env),
        connection_timeout=_CONNECT_SECONDS,
        read_timeout=_READ_SECONDS,
        retry_total=2,
    )


def _option(options: Mapping[str, str], name: str) -> str:
    """A storage option by any of the names Lance's Azure client accepts for it."""
    for key in (name, f"azure_storage_{name}", f"azure_{name}"):
        if options.get(key):
            return options[key]
    return ""


def _credential(location: IndexLocation, account: str, env: Mapping[str, str]) -> Any:
    if key := env.get("AZURE_STORAGE_ACCOUNT_KEY"):
        return {"account_name": account, "account_key": key}
    if sas := env.get("AZURE_STORAGE_SAS_TOKEN"):
        return sas
    try:  # optional, not in the extra; imported by name: it ships no type information
        identity = importlib.import_module("azure.identity")
    except ImportError:
        raise IndexLocationError(
            f"{location.uri}: no credentials for the object store",
            "set AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN in the environment "
            "(or install azure-identity for a managed identity or `az login`)",
        ) from None
    return identity.DefaultAzureCredential()
