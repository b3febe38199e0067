"""Named places (slides, sheet ranges, cells, messages, chapters): how a location is written from a
reader's template, and how a written place is read back by `rag show`."""

from __future__ import annotations

import pytest

from raggity.core.places import place_range, place_title, render_place
from raggity.core.types import Location


def test_a_template_writes_one_place_or_a_range() -> None:
    assert Location(1, 4, 7, 7, "slide{s} {n}").cite("deck.pptx") == "deck.pptx:slide 7"
    assert Location(1, 4, 7, 9, "slide{s} {n}").cite("deck.pptx") == "deck.pptx:slides 7-9"
    assert Location(1, 9, 14, 30, "Costs!A{first}:F{last}").cite("costs.xlsx") == "costs.xlsx:Costs!A14:F30"
    assert Location(1, 1, 12, 12, "cell{s} {n}").cite("a.ipynb") == "a.ipynb:cell 12"
    assert Location(1, 1, 3, 3, 'message {n} "Budget"').cite("mail.mbox") == 'mail.mbox:message 3 "Budget"'
    assert Location(1, 1, 1, 1, 'message "Plans"').cite("plans.eml") == 'plans.eml:message "Plans"'
    heading = 'heading "Budget" (paragraph{s} {n})'
    assert Location(1, 1, 14, 14, heading).cite("r.docx") == 'r.docx:heading "Budget" (paragraph 14)'
    # A PDF page has no template: it is written as before, and an HTML anchor too.
    assert Location(1, 2, 4, 4).cite("scan.pdf") == "scan.pdf:page 4"
    assert Location(0, 0, anchor="x").cite("a.html") == "a.html#x"
    assert not Location(1, 4, 7, 7, "slide{s} {n}").has_lines


@pytest.mark.parametrize(
    ("template", "place", "expected"),
    [
        ("slide{s} {n}", "slide 7", (7, 7)),
        ("slide{s} {n}", "slides 7-9", (7, 9)),
        ("slide{s} {n}", "cell 7", None),
        ("Costs!A{first}:F{last}", "Costs!A14:F30", (14, 30)),
        ("Costs!A{first}:F{last}", "Other!A14:F30", None),
        ('heading "Budget" (paragraph{s} {n})', 'heading "Budget" (paragraph 14)', (14, 14)),
        ('heading "Budget" (paragraph{s} {n})', 'heading "Costs" (paragraph 14)', None),
        ('message "Plans"', 'message "Plans"', (0, 2**31 - 1)),
    ],
)
def test_a_written_place_is_read_back_by_its_template(
    template: str, place: str, expected: tuple[int, int] | None
) -> None:
    assert place_range(template, place) == expected
    if expected is not None and expected[1] < 2**31 - 1:
        assert render_place(template, *expected) == place


def test_titles_from_documents_are_one_safe_line() -> None:
    assert place_title('The "Q3"\n\x1b[2J plan {n}') == "The 'Q3' [2J plan n"
    assert len(place_title("word " * 40)) == 60
