"""Reads an ELF library's dynamic symbol table from the file, without loading the library.

One lookup (does this file define that symbol?) in the standard library's struct: pyelftools would
do it too, as a new dependency for a check that runs before every generator load.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

# ELF layouts by class (1: 32-bit, 2: 64-bit): where the section header table's offset and its
# entries' size and count are, a section header, a symbol, and where a symbol's section index is.
_ELF = {
    1: (0x20, "I", 0x2E, "10I", "IIIBBH", 5),
    2: (0x28, "Q", 0x3A, "IIQQQQIIQQ", "IBBHQQ", 3),
}
_DYNSYM = 11  # SHT_DYNSYM: the symbols the dynamic loader sees


def _read(file: BinaryIO, offset: int, size: int) -> bytes:
    file.seek(offset)
    return file.read(size)


def exports_definition(path: Path, symbol: bytes) -> bool:
    """Whether the ELF library `path` defines `symbol` in its dynamic symbol table, read from the
    file without loading it; False for a file that is not an ELF library or cannot be read."""
    try:
        with path.open("rb") as file:
            ident = file.read(16)
            if ident[:4] != b"\x7fELF" or ident[4] not in _ELF or ident[5] not in (1, 2):
                return False
            shoff_at, shoff_format, counts_at, section_format, symbol_format, shndx = _ELF[ident[4]]
            order = "<" if ident[5] == 1 else ">"
            file.seek(shoff_at)
            (shoff,) = struct.unpack(order + shoff_format, file.read(struct.calcsize(shoff_format)))
            file.seek(counts_at)
            entry_size, count = struct.unpack(order + "HH", file.read(4))
            file.seek(shoff)
            table = file.read(entry_size * count)
            sections = [
                struct.unpack_from(order + section_format, table, i * entry_size) for i in range(count)
            ]

            for section in sections:
                if section[1] != _DYNSYM:
                    continue
                strings = sections[section[6]]  # sh_link: its string table
                names = _read(file, strings[4], strings[5])  # sh_offset, sh_size
                # Every offset where the name starts (a string table may share a longer name's tail).
                offsets, at = set(), names.find(symbol + b"\0")
                while at >= 0:
                    offsets.add(at)
                    at = names.find(symbol + b"\0", at + 1)
                if any(
                    entry[0] in offsets and entry[shndx] != 0  # a definition, not an undefined reference
                    for entry in struct.iter_unpack(
                        order + symbol_format, _read(file, section[4], section[5])
                    )
                ):
                    return True
    except (OSError, struct.error, IndexError):
        return False  # a library that cannot be read will not load either: the bindings' import says so
    return False
