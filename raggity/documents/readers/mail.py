"""Saved mail (.eml, one message; .mbox, many): each message headed by its subject, then who sent it
and when, so that the heading trail says which mail a passage is from; cited as
`message 3 "Subject"` (in an mbox) or `message "Subject"` (an .eml).

Read with the standard library's `email` package. The plain-text part is preferred to the HTML one.
Attachments whose type raggity reads are read by the same readers (readers/embedded.py), at most
MAX_ATTACHMENTS a message and MAX_DEPTH mails deep (a mail attached to a mail attached to a mail);
one that cannot be read is named with its reason, never dropped silently. A forwarded mail sent as
the whole message (message/rfc822), the messages of a digest, and inline text parts after the body
(a list's footer) are read too; pictures attached are read by OCR when `[ingest] ocr` allows,
cited `message 3 "Subject" (image, OCR)` (pictures.py).
"""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage, MIMEPart
from pathlib import Path

from raggity.core.places import place_title
from raggity.core.types import Document
from raggity.documents.readers.embedded import BYTE_READERS, read_bytes
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, TooMuchTextError, UnreadableFileError
from raggity.documents.readers.html_text import html_text
from raggity.documents.readers.kinds import kind_of
from raggity.documents.readers.ocr_options import DEFAULT_OCR, OcrOptions
from raggity.documents.readers.outline import Outline
from raggity.documents.readers.pictures import PICTURE_MARK, Pictures
from raggity.documents.readers.text import decode_bytes

MAX_ATTACHMENTS = 20
MAX_DEPTH = 2
# Multipart containers opened inside one message (a digest, an alternative inside a mixed part):
# a hostile mail can nest thousands.
MAX_CONTAINERS = 50
# An mbox's messages each start with a "From " line (the envelope), at the start of the file or
# after a line end; a body line that starts so is written ">From " by the mail program.
_ENVELOPE = re.compile(rb"(?:\A|\n)From [^\n]*\n")
_TEXT_KINDS = frozenset({"text", "markdown", "rst", "code"})


@dataclass(frozen=True)
class _Read:
    """What every message of one file is read with."""

    outline: Outline
    max_chars: int
    ocr: OcrOptions
    pictures: Pictures


def mail_document(
    data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS, ocr: OcrOptions = DEFAULT_OCR
) -> Document:
    read = _Read(Outline(max_chars), max_chars, ocr, Pictures(source, ocr))
    outline = read.outline
    if data.lstrip().startswith(b"From "):
        messages = [part for part in _ENVELOPE.split(data.lstrip()) if part.strip()]
        for number, raw in enumerate(messages, start=1):
            message = _parse(raw)
            outline.place(number, f'message {{n}} "{place_title(_subject(message))}"')
            _message(read, message, level=1, depth=0)
    else:
        message = _parse(data)
        if not message.keys():
            raise UnreadableFileError("not a mail message (no headers)")
        outline.place(1, f'message "{place_title(_subject(message))}"')
        _message(read, message, level=1, depth=0)
    read.pictures.finish()
    return outline.document(source, "mail")


def _parse(data: bytes) -> EmailMessage:
    message = email.message_from_bytes(data, policy=email.policy.default)
    assert isinstance(message, EmailMessage)  # so says policy.default
    return message


def _subject(message: EmailMessage) -> str:
    return _header(message, "subject") or "(no subject)"


def _header(message: EmailMessage, name: str) -> str:
    try:
        return " ".join(str(message.get(name, "")).split())
    except (ValueError, TypeError, IndexError):  # a header the policy cannot parse
        return ""


def _message(read: _Read, message: EmailMessage, *, level: int, depth: int) -> None:
    outline = read.outline
    outline.heading(_subject(message), level)
    sender = ", ".join(f"{name}: {value}" for name in ("From", "Date") if (value := _header(message, name)))
    if sender:
        outline.heading(sender, level + 1)
    if message.get_content_type() == "message/rfc822":
        # A mail forwarded as the whole message: its text is the inner mail's.
        _attached_mail(read, message, "forwarded mail", level=level + 2, depth=depth)
        return
    body = message.get_body(preferencelist=("plain", "html"))
    if body is not None:
        outline.block(_text(body, read.max_chars))
    for index, part in enumerate(_parts(message)):
        if index == MAX_ATTACHMENTS:
            outline.block(f"(attachments after the first {MAX_ATTACHMENTS} not read)")
            break
        _attachment(read, part, level=level + 2, depth=depth)


def _parts(message: EmailMessage) -> Iterator[EmailMessage]:
    """The parts after the body, multipart containers (a digest, a mixed part) opened in order; of an
    alternative, the part a reader would show."""
    stack = list(reversed(list(message.iter_attachments())))
    opened = 0
    while stack:
        part = stack.pop()
        if part.get_content_maintype() != "multipart":
            yield part
            continue
        opened += 1
        if opened > MAX_CONTAINERS:
            return
        if part.get_content_subtype() == "alternative":
            best = part.get_body(preferencelist=("plain", "html"))
            stack.extend([best] if isinstance(best, EmailMessage) else [])
        else:
            stack.extend(reversed([p for p in part.iter_parts() if isinstance(p, EmailMessage)]))


def _text(part: MIMEPart, max_chars: int) -> str:
    text = _content(part)
    if part.get_content_subtype() == "html":
        return html_text(text, max_chars)[0]
    return text


def _content(part: MIMEPart) -> str:
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError, KeyError):
        # An unknown charset or a broken transfer encoding: the bytes, decoded as a text file is.
        payload = part.get_payload(decode=True)
        return decode_bytes(payload) if isinstance(payload, bytes) and payload.strip() else ""
    if isinstance(content, bytes):
        return decode_bytes(content) if content.strip() else ""
    return content if isinstance(content, str) else ""


def _attached_mail(read: _Read, part: EmailMessage, name: str, *, level: int, depth: int) -> None:
    inner = part.get_payload(0) if part.is_multipart() else None
    if depth + 1 >= MAX_DEPTH or not isinstance(inner, EmailMessage):
        read.outline.block(f"Attached mail {name}: not read (more than {MAX_DEPTH} mails deep)")
        return
    _message(read, inner, level=level, depth=depth + 1)


def _attachment(read: _Read, part: EmailMessage, *, level: int, depth: int) -> None:
    outline = read.outline
    filename = part.get_filename() or ""
    name = place_title(filename) or part.get_content_type()
    if part.get_content_type() == "message/rfc822":
        _attached_mail(read, part, name, level=level, depth=depth)
        return
    kind = kind_of(Path(filename)) if filename else None
    payload = part.get_payload(decode=True)
    data = payload if isinstance(payload, bytes) else b""
    if kind == "image" or (kind is None and part.get_content_maintype() == "image"):
        outline.picture(read.pictures.text(name, data), PICTURE_MARK)
        return
    if kind is None and part.get_content_maintype() == "text":
        text = _text(
            part, read.max_chars
        )  # an inline part after the body: a list's footer, a table of contents
    elif kind in _TEXT_KINDS:
        text = decode_bytes(data)
    elif kind is not None and kind in BYTE_READERS:
        try:
            text = read_bytes(kind, data, name, max_chars=read.max_chars, ocr=read.ocr).text
        except TooMuchTextError:
            raise
        except UnreadableFileError as exc:
            outline.block(f"Attachment {name}: not read ({exc})")
            return
    else:
        return  # an archive, a PDF, a program: nothing of it is read (documented)
    if filename:
        outline.heading(f"Attachment: {name}", level)
    outline.block(text)
