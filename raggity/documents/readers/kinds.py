"""Which files raggity reads, and as which kind of document, decided from the file name alone."""

from __future__ import annotations

from pathlib import Path

from raggity.core.types import DocumentKind

_BY_SUFFIX: dict[str, DocumentKind] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".docm": "docx",
    ".pptx": "pptx",
    ".pptm": "pptx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".csv": "csv",
    ".tsv": "csv",
    ".ipynb": "ipynb",
    ".eml": "mail",
    ".mbox": "mail",
    ".epub": "epub",
    ".odt": "odt",
    ".ods": "ods",
    ".odp": "odp",
    ".rtf": "rtf",
    # Word, Excel and PowerPoint 97-2003: listed so that a folder's old files are each named with the
    # fix (convert them) rather than passed over in silence (readers/__init__.py, legacy_office).
    ".doc": "docx",
    ".xls": "xlsx",
    ".ppt": "pptx",
    # Read by OCR ([ingest] ocr); without it, skipped with a line that says how to turn it on.
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".tif", ".tiff"), "image"),
    **dict.fromkeys(
        (
            ".py .js .mjs .cjs .ts .tsx .jsx .java .go .rs .c .h .cpp .hpp .cc .cxx .hh .hxx .cs .rb .php .sh"
            " .bash .zsh .swift"
            " .kt .scala .sql .toml .yaml .yml .json .ini .cfg .lua .r .jl .m .pl .ex .exs .hs .ml .css"
            " .scss .vue .svelte"
        ).split(),
        "code",
    ),
}

# Compared lower-cased: "Makefile" and "makefile" are both read by make, "readme" is still a readme.
_BY_NAME: dict[str, DocumentKind] = {
    **dict.fromkeys(("makefile", "gnumakefile", "dockerfile", "containerfile", "justfile"), "code"),
    **dict.fromkeys(("readme", "license", "licence", "copying", "notice", "authors", "changelog"), "text"),
}


def kind_of(path: Path) -> DocumentKind | None:
    """The document kind for `path`, or None when raggity does not read files like it."""
    name = path.name.lower()
    by_name = _BY_NAME.get(name)
    if by_name is not None:
        return by_name
    # Path.suffix without a second Path (an ingest asks this several times of every file): a name
    # that starts with its only dot (".bashrc") has none.
    dot = name.rfind(".")
    return _BY_SUFFIX.get(name[dot:]) if dot > 0 else None
