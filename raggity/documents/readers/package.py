"""Zip packages (docx, xlsx, pptx, odt, ods, odp, epub) opened with bounds, so a hostile file is a skip.

A zip bomb is a small file that expands to gigabytes: the number of entries, each entry's size and
the total read are capped, counting the bytes actually inflated (the sizes a zip declares can lie).
Encrypted Office files are not zips at all but OLE compound files ("encrypted or password-protected");
a zip entry with its encryption flag set is refused the same way. Nothing in a package is run
(macros) or fetched (external links, linked images): readers only read named XML parts.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from dataclasses import dataclass

from raggity.documents.readers.errors import UnreadableFileError

# An Office document has tens of parts; an e-book a few hundred. 10,000 is far past both.
MAX_ENTRIES = 10_000
# One XML part: a 100,000-row sheet is about 40 MB of XML. Past 128 MiB, the text would pass
# ingest.max_file_chars anyway.
MAX_PART_BYTES = 128 << 20
# Everything read from one package together.
MAX_TOTAL_BYTES = 256 << 20
_BLOCK = 1 << 20
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_FLAG = 0x1


@dataclass(frozen=True)
class Limits:
    entries: int = MAX_ENTRIES
    part_bytes: int = MAX_PART_BYTES
    total_bytes: int = MAX_TOTAL_BYTES


class Package:
    """The parts of one zip package, read by name with the bounds of `limits`."""

    def __init__(self, data: bytes, kind: str, limits: Limits = Limits()) -> None:
        if data.startswith(_OLE_MAGIC):
            # Word, Excel and PowerPoint store a password-protected file as an OLE container
            # ("EncryptedPackage"); a .doc or .xls renamed to .docx or .xlsx looks the same.
            raise UnreadableFileError(
                f"encrypted or password-protected {kind} (or an old binary Office file)"
            )
        if not data:
            raise UnreadableFileError("empty file")
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            entries = self._zip.infolist()
        except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as exc:
            raise UnreadableFileError(f"corrupt or truncated {kind} (not a valid zip: {exc})") from exc
        if len(entries) > limits.entries:
            raise UnreadableFileError(
                f"zip bomb? {kind} holds {len(entries):,} entries (at most {limits.entries:,})"
            )
        self._kind = kind
        self._limits = limits
        self._entries = {entry.filename: entry for entry in entries}
        self._read = 0

    def names(self) -> list[str]:
        return list(self._entries)

    def has(self, name: str) -> bool:
        return name in self._entries

    def read(self, name: str) -> bytes:
        """The inflated bytes of part `name`; raises UnreadableFileError when missing, too big or bad."""
        entry = self._entries.get(name)
        if entry is None:
            raise UnreadableFileError(f"corrupt {self._kind}: no part {name}")
        if entry.flag_bits & _ENCRYPTED_FLAG:
            raise UnreadableFileError(f"encrypted or password-protected {self._kind}")
        limit = min(self._limits.part_bytes, self._limits.total_bytes - self._read)
        if entry.file_size > limit:
            raise self._bomb(name, entry.file_size)
        out = bytearray()
        try:
            with self._zip.open(entry) as stream:
                while block := stream.read(_BLOCK):
                    out += block
                    if len(out) > limit:
                        raise self._bomb(name, len(out))
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError, OSError) as exc:
            # zlib.error: a damaged deflate stream, which zipfile passes through unwrapped.
            raise UnreadableFileError(f"corrupt or truncated {self._kind} ({name}: {exc})") from exc
        self._read += len(out)
        return bytes(out)

    def _bomb(self, name: str, size: int) -> UnreadableFileError:
        if size > self._limits.part_bytes:
            return UnreadableFileError(
                f"zip bomb? {self._kind} part {name} expands past {self._limits.part_bytes >> 20} MiB"
            )
        return UnreadableFileError(
            f"zip bomb? {self._kind} expands past {self._limits.total_bytes >> 20} MiB in all"
        )
