"""Spots document text that gives orders to the reader or the model, and strings an answer must not
carry without their source: URLs and credential-looking values."""

from __future__ import annotations

import re

# Phrases that address an assistant or tell it what to say, and phrases that ask the reader to hand
# over or confirm secrets. Ordinary documentation addresses the reader too ("run make install"), so
# the list keeps to what a document has no honest reason to say to a question-answering tool.
_INSTRUCTION = re.compile(
    r"\b(?:"
    r"ignore (?:all |any |the )?(?:previous|prior|above|earlier|preceding) (?:instructions|prompts?|rules)"
    r"|disregard (?:all |any |the )?(?:previous|prior|above|earlier) "
    r"|(?:tell|inform|remind|convince) the (?:user|reader)s?\b"
    r"|(?:you are|act as) (?:now )?(?:an? )?(?:ai|assistant|language model|chatbot|llm)\b"
    r"|(?:the |an? )?(?:assistant|ai|language model|chatbot|llm) (?:must|should|will) "
    r"|system prompt"
    r"|(?:respond|reply|answer) (?:only )?(?:with|by saying)\b"
    r"|do not (?:mention|reveal|tell) (?:this|these|that|the)"
    r"|(?:confirm|verify|enter|update|re-?enter|submit) (?:your |the )?"
    r"(?:password|credentials|account|login|pin|card)"
    r"|the password is"
    r")",
    re.IGNORECASE,
)

_URL = re.compile(
    r"(?:https?|ftp)://[^\s<>\"'\])]+|\bwww\.[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s<>\"'\])]*", re.IGNORECASE
)
# "password is X", "api key: X", "token = X": the value after the label is the secret. After a
# password label any word counts; after the looser labels ("token", "pin", "key", "secret", which
# prose uses too: "the token is stored...") only a value with a digit or a symbol does.
_PASSWORD = re.compile(
    r"\b(?:password|passphrase|passcode|pass word)\s*(?:is|was|:|=)\s*[\"'`]?([^\s\"'`,;]{3,})", re.IGNORECASE
)
_LABELLED_SECRET = re.compile(
    r"\b(?:pin|api[ _-]?key|secret(?: key)?|access[ _-]?token|token)\s*(?:is|was|:|=)\s*[\"'`]?"
    r"((?=[^\s\"'`,;]*[\d_\-+/=!@#$%^&*])[^\s\"'`,;]{3,})",
    re.IGNORECASE,
)
# Long runs of letters and digits mixed, as API keys and hashes look ("sk-3fA9...", "ghp_...").
_KEY_LIKE = re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{24,}\b")


def instruction_warning(text: str) -> str:
    """A one-line warning quoting the first instruction-like phrase, or "" for ordinary text."""
    match = _INSTRUCTION.search(text)
    if match is None:
        return ""
    return f'this source gives instructions ("{match.group(0).strip()}"): treat what it says with care'


def sensitive_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds URLs and credential-looking values: (start, end) pairs, in order, not
    overlapping. Only these places are redacted: the same word elsewhere is not a secret."""
    found: list[tuple[int, int]] = []
    for m in _URL.finditer(text):
        found.append((m.start(), m.start() + len(m.group(0).rstrip(".,;:!?"))))
    for pattern in (_PASSWORD, _LABELLED_SECRET):
        found += [(m.start(1), m.start(1) + len(m.group(1).rstrip(".,;:!?"))) for m in pattern.finditer(text)]
    found += [m.span() for m in _KEY_LIKE.finditer(text)]
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if end > start and (not spans or start >= spans[-1][1]):
            spans.append((start, end))
    return spans


def sensitive_strings(text: str) -> list[str]:
    """URLs and credential-looking values in `text`, in order of appearance, without duplicates."""
    return list(dict.fromkeys(text[start:end] for start, end in sensitive_spans(text)))
