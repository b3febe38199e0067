"""Saved mail (.eml, one message; .mbox, many): each message headed by its subject, then who sent it
and when, so that the heading trail says which mail a passage is from; cited as
`message 3 "Subject"` (in an mbox) or `message "Subject"` (an .eml).

Read with the standard library's `email` package. The plain-text part is preferred to the HTML one.
Attachments whose type raggity reads are read by the same readers (readers/embedded.py), at most
MAX_ATTACHMENTS a message and MAX_DEPTH mails deep (a mail attached to a mail attached to a mail);
one that cannot be read is named with its reason, never dropped silently.
"""

from __future__ import annotations

import email
import email.policy
import re
from email.message import EmailMessage, MIMEPart
from pathlib import Path

from raggity.core.places import place_title
from raggity.core.types import Document
from raggity.ingest.readers.embedded import byte_reader
from raggity.ingest.readers.errors import DEFAULT_MAX_CHARS, TooMuchTextError, UnreadableFileError
from raggity.ingest.readers.html_text import html_text
from raggity.ingest.readers.kinds import kind_of
from raggity.ingest.readers.outline import Outline
from raggity.ingest.readers.text import decode_bytes

MAX_ATTACHMENTS = 20
MAX_DEPTH = 2
# An mbox's messages each start with a "From " line (the envelope), at the start of the file or
# after a line end; a body line that starts so is written ">From " by the mail program.
_ENVELOPE = re.compile(rb"(?:\A|\n)From [^\n]*\n")
_TEXT_KINDS = frozenset({"text", "markdown", "rst", "code"})


def mail_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    outline = Outline(max_chars)
    if data.lstrip().startswith(b"From "):
        messages = [part for part in _ENVELOPE.split(data.lstrip()) if part.strip()]
        for number, raw in enumerate(messages, start=1):
            message = _parse(raw)
            outline.place(number, f'message {{n}} "{place_title(_subject(message))}"')
            _message(outline, message, level=1, depth=0, max_chars=max_chars)
    else:
        message = _parse(data)
        if not message.keys():
            raise UnreadableFileError("not a mail message (no headers)")
        outline.place(1, f'message "{place_title(_subject(message))}"')
        _message(outline, message, level=1, depth=0, max_chars=max_chars)
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


def _message(outline: Outline, message: EmailMessage, *, level: int, depth: int, max_chars: int) -> None:
    outline.heading(_subject(message), level)
    sender = ", ".join(f"{name}: {value}" for name in ("From", "Date") if (value := _header(message, name)))
    if sender:
        outline.heading(sender, level + 1)
    outline.block(_body(message, max_chars))
    for index, part in enumerate(message.iter_attachments()):
        if index == MAX_ATTACHMENTS:
            outline.block(f"(attachments after the first {MAX_ATTACHMENTS} not read)")
            break
        _attachment(outline, part, level=level + 2, depth=depth, max_chars=max_chars)


def _body(message: EmailMessage, max_chars: int) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
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


def _attachment(outline: Outline, part: EmailMessage, *, level: int, depth: int, max_chars: int) -> None:
    name = place_title(part.get_filename() or "") or part.get_content_type()
    if part.get_content_type() == "message/rfc822":
        inner = part.get_content()
        if depth + 1 >= MAX_DEPTH or not isinstance(inner, EmailMessage):
            outline.block(f"Attached mail {name}: not read (more than {MAX_DEPTH} mails deep)")
            return
        _message(outline, inner, level=level, depth=depth + 1, max_chars=max_chars)
        return
    kind = kind_of(Path(name))
    reader = byte_reader(kind)
    if reader is None and kind not in _TEXT_KINDS:
        return  # an image, an archive, a PDF: nothing of it is read (documented)
    payload = part.get_payload(decode=True)
    data = payload if isinstance(payload, bytes) else b""
    try:
        text = reader(data, name, max_chars=max_chars).text if reader is not None else decode_bytes(data)
    except TooMuchTextError:
        raise
    except UnreadableFileError as exc:
        outline.block(f"Attachment {name}: not read ({exc})")
        return
    outline.heading(f"Attachment: {name}", level)
    outline.block(text)
