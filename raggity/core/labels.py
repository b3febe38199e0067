"""Labels: the short lines that name what follows them (a definition term, an option, a title).

Reference documentation is built of them: "pop [--index] [<stash>]" above "Remove a single stashed
state ...", "--depth <depth>" above "Create a shallow clone ...". Parted from its label, the text
below loses its subject, and a model reading "Like pop, but do not remove the state" without the
"apply" above it answered that pop keeps the state. Chunking keeps a label with the text below it;
focusing keeps a kept sentence's label with it.
"""

from __future__ import annotations

import re

# Terms, options and titles are shorter than this; a longer line is prose.
LABEL_MAX_CHARS = 80
# A line that ends a sentence, with any closing quotes or brackets after the stop.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")


def is_label(line: str) -> bool:
    """A single line of at most LABEL_MAX_CHARS with a letter in it that does not end a sentence.
    Whether it stands alone (a paragraph of its own or a heading) is for the caller to know."""
    stripped = line.strip()
    return (
        0 < len(stripped) <= LABEL_MAX_CHARS
        and "\n" not in stripped
        and any(ch.isalpha() for ch in stripped)
        and not _SENTENCE_END.search(stripped)
    )
