"""Locations as a person reads them: what each kind shows, the citation it opens, and a parent's span."""

from __future__ import annotations

from raggity.core.types import Location


def test_file_lines_pages_and_anchors_show_as_citations() -> None:
    assert Location(3, 9).cite("notes.md") == "notes.md:lines 3-9"
    assert Location(4, 4).cite("notes.md") == "notes.md:line 4"
    assert Location(12, 40, 2, 2).cite("a.pdf") == "a.pdf:page 2"
    assert Location(12, 40, 2, 3).cite("a.pdf") == "a.pdf:pages 2-3"
    assert (
        Location(0, 0, anchor="copy.deepcopy").cite("library/copy.html") == "library/copy.html#copy.deepcopy"
    )
    # HTML text before any anchor: the page itself, never a line range of extracted text.
    assert Location(0, 0).cite("index.html") == "index.html"
    assert str(Location(0, 0)) == ""


def test_html_lines_are_not_file_lines() -> None:
    assert Location(3, 9).has_lines
    assert not Location(0, 0, anchor="x").has_lines
    assert not Location(5, 9, 1, 1).has_lines


def test_anchor_text_is_percent_encoded_as_in_a_url() -> None:
    assert str(Location(0, 0, anchor="a b")) == "#a%20b"
    assert str(Location(0, 0, anchor="[bold]x[/bold]")) == "#%5Bbold%5Dx%5B/bold%5D"
    assert str(Location(0, 0, anchor="\x1b]8;;http://x\x07")) == "#%1B%5D8;;http://x%07"
    assert str(Location(0, 0, anchor="münchen")) == "#m%C3%BCnchen"


def test_a_parent_spans_from_its_first_child_to_its_last() -> None:
    first, last = Location(3, 5, anchor="intro"), Location(8, 12, anchor="later")
    assert first.through(last) == Location(3, 12, anchor="intro")
    assert Location(1, 4, 1, 1).through(Location(5, 9, 2, 3)) == Location(1, 9, 1, 3)


def test_a_location_without_an_anchor_equals_the_old_four_field_location() -> None:
    # Cached answers from before anchors existed store four numbers.
    assert Location(*[3, 9, None, None]) == Location(3, 9)
