"""Path races, one component at a time, and URL-valued options, with drawn names and passwords.

Paths: a file some folders deep; any one component (a folder, or the file itself) is swapped for a
symlink (to a mirror outside holding a secret, to "/", dangling, or relative) after its real path was
taken. Reading, hashing and opening it must then refuse with one short reason, and the secret must
never be read; with nothing swapped, all three see the file.

URLs: an endpoint or a Ray address holding a drawn user and password (any characters) is refused
at load with one line that names file, line and key and holds no part of the password; a message
quoting such a URL keeps no part of the password after redaction.
"""

from __future__ import annotations

import errno
import hashlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raggity.config import CONFIG_NAME, load_config
from raggity.core.beneath import open_no_links
from raggity.core.errors import ConfigError
from raggity.documents.readers import UnreadableFileError, read_file
from raggity.models.hashing import sha256_file
from raggity.store.uri import redact
from tests.fuzz.conftest import FUZZ

SECRET = "The vault passphrase is ZEBRA.\n"
DECOY = "Cats sleep most of the day.\n"
REASONS = {
    "a folder on its path was replaced by a symlink (not followed)",
    "replaced by a symlink (not followed)",
}

# Folder names: any characters a file system takes in a name, except "/" and NUL; never "." or "..".
NAME = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="/\x00"), min_size=1, max_size=12
).filter(lambda s: s not in (".", "..") and len(s.encode("utf-8")) <= 200)
TARGET = st.sampled_from(["mirror", "root", "dangling", "relative"])


def _swap(component: Path, target: str, outside: Path) -> None:
    component.rename(component.with_name(component.name + ".aside"))
    if target == "mirror":
        component.symlink_to(outside, target_is_directory=outside.is_dir())
    elif target == "root":
        component.symlink_to("/")
    elif target == "dangling":
        component.symlink_to(outside.parent / "missing")
    else:
        component.symlink_to(component.name + ".aside")  # back to where it was, through a link


@FUZZ
@given(folders=st.lists(NAME, min_size=1, max_size=5, unique=True), at=st.integers(0, 5), target=TARGET)
def test_a_symlink_at_any_component_is_never_followed(
    tmp_path: Path, folders: list[str], at: int, target: str
) -> None:
    base = Path(tempfile.mkdtemp(dir=tmp_path)).resolve()
    components = [*folders, "note.md"]
    real = base.joinpath("root", *components)
    real.parent.mkdir(parents=True)
    real.write_text(DECOY, encoding="utf-8")
    at = min(at, len(components) - 1)
    # Outside, the names below the swapped component lead to the secret, so following would read it.
    outside = base / "outside"
    secret = outside.joinpath(*components[at + 1 :]) if at + 1 < len(components) else outside
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(SECRET, encoding="utf-8")

    _swap(base.joinpath("root", *components[: at + 1]), target, outside)

    # ELOOP whichever component is the link: never ENOENT or a read through it.
    for attempt in (lambda: open_no_links(real), lambda: sha256_file(real, follow_symlinks=False)):
        with pytest.raises(OSError, match=r"symlink|symbolic link") as refused:
            attempt()
        assert refused.value.errno == errno.ELOOP
    with pytest.raises(UnreadableFileError) as read:
        list(read_file(real))
    assert read.value.message in REASONS, read.value.message
    assert "\n" not in read.value.message


@FUZZ
@given(folders=st.lists(NAME, min_size=1, max_size=5, unique=True))
def test_a_path_with_no_link_reads_and_hashes_as_it_is(tmp_path: Path, folders: list[str]) -> None:
    base = Path(tempfile.mkdtemp(dir=tmp_path)).resolve()
    file = base.joinpath(*folders, "note.md")
    file.parent.mkdir(parents=True)
    file.write_text(DECOY, encoding="utf-8")

    [document] = list(read_file(file))
    assert document.text.strip() == DECOY.strip()
    assert sha256_file(file, follow_symlinks=False) == hashlib.sha256(DECOY.encode()).hexdigest()


# -- URL-valued options ---------------------------------------------------------------------------
# A password's characters: anything, "@", "/", spaces and escapes included, between two markers that
# nothing else holds: either marker in a message is a leak of the start or the end of the password.
HEAD, TAIL = "QzWv7k", "Kj3Xpq"
PASSWORD = st.text(st.characters(exclude_categories=("Cs",)), max_size=24).map(lambda s: f"{HEAD}{s}{TAIL}")
USER = st.text(st.characters(exclude_categories=("Cs",)), max_size=10)
HOST = st.sampled_from(["127.0.0.1", "[::1]", "minio.internal", "[fe80::1%25eth0]", ""])
PORT = st.one_of(st.just(""), st.integers(0, 99999).map(lambda p: f":{p}"))


def _leaks(text: str) -> bool:
    return HEAD in text or TAIL in text


def _toml_string(value: str) -> str:
    """`value` as a TOML basic string: every control character, quote and backslash escaped."""
    escaped = "".join(f"\\u{ord(c):04x}" if c < " " or c in '"\\\x7f' else c for c in value)
    return f'"{escaped}"'


@FUZZ
@given(
    user=USER,
    password=PASSWORD,
    host=HOST,
    port=PORT,
    key=st.sampled_from(["endpoint", "aws_endpoint", "proxy_url", "anything"]),
)
def test_userinfo_in_a_storage_url_is_refused_in_one_line_without_the_password(
    tmp_path: Path, user: str, password: str, host: str, port: str, key: str
) -> None:
    config = Path(tempfile.mkdtemp(dir=tmp_path)) / CONFIG_NAME
    url = f"http://{user}:{password}@{host}{port}/bucket"
    config.write_text(
        f'[index]\npath = "s3://bucket/p"\n\n[index.storage]\n{key} = {_toml_string(url)}\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(explicit=config)
    message = str(caught.value)
    assert message.startswith(f"{config}:5: [index.storage] {key}: a URL must not"), message
    assert "\n" not in message
    assert not _leaks(message)


@FUZZ
@given(user=USER, password=PASSWORD, host=HOST, port=PORT)
def test_userinfo_in_the_ray_address_is_refused_without_the_password(
    tmp_path: Path, user: str, password: str, host: str, port: str
) -> None:
    config = Path(tempfile.mkdtemp(dir=tmp_path)) / CONFIG_NAME
    address = f"ray://{user}:{password}@{host}{port}"
    config.write_text(f"[ingest]\nray_address = {_toml_string(address)}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(explicit=config)
    assert str(caught.value).startswith(f"{config}:2: [ingest] ray_address: a URL must not")
    assert not _leaks(str(caught.value))


# Redaction works line by line: a password holding a line break, or a scheme ("x://") of its own,
# is cut where the message's next line or next URL starts; config refuses both long before.
MESSAGE_PASSWORD = PASSWORD.filter(lambda s: "\n" not in s and "\r" not in s and "://" not in s)


@FUZZ
@given(
    user=USER.filter(lambda s: "\n" not in s and "\r" not in s and "://" not in s),
    password=MESSAGE_PASSWORD,
    host=HOST,
    port=PORT,
    before=st.sampled_from(["error sending request for url (", "", "s3://bucket/index: ", '{"url": "']),
    after=st.sampled_from([")", "", ": connection refused", '"}', "/b/k?x=1 failed\nnext line a@b"]),
)
def test_redaction_keeps_no_part_of_the_password(
    user: str, password: str, host: str, port: str, before: str, after: str
) -> None:
    message = f"{before}http://{user}:{password}@{host}{port}{after}"
    cleaned = redact(message, {})
    assert not _leaks(cleaned), cleaned
    assert f"http://***@{host}{port}" in cleaned
