"""Generated, minified and vendored files: written by a machine or copied from elsewhere, not authored.

The anchor is GitHub linguist, which hides such files from diffs and language statistics:
lib/linguist/generated.rb (machine-written files) and lib/linguist/vendor.yml (third-party copies).
raggity takes the rules of both that mark a file as machine-written or as a bundled copy, and leaves
out those that mark a project's own files only to keep them out of language statistics:
- from generated.rb: lock files (composer, Cargo, Gopkg/glide, poetry, pdm, uv, pixi, esy, deno,
  npm package-lock and shrinkwrap, pnpm, Pipfile, Terraform, Package.resolved, flake, Bazel; and,
  of the same kind though not listed there, yarn.lock, bun.lock(b) and Gemfile.lock);
  Yarn Plug'n'Play (.pnp.*); source maps (*.js.map, *.css.map; any .map here); minified JS and CSS
  (average line longer than 110 characters); generated .NET (.designer.cs/vb, .feature.cs),
  Zephir (.zep.c/h/php) and Delphi (_tlb.pas) files; the folders node_modules, Pods, Carthage/Build,
  Godeps and __generated__; and the "generated" headers of Go, protoc, gRPC, Thrift, Cython, JNI,
  PEG.js, Jison, CoffeeScript, Racc, JFlex, GrammarKit and jOOQ output.
  Not taken: generated_html? (HTML from Doxygen, makeinfo, pandoc...), because a documentation
  build is exactly what a person points raggity at.
- from vendor.yml: "*.min.js"/"*.min.css" and "-min" names; the vendor/, vendors/, third_party/
  and 3rd_party/ folders and bower_components/; bundled libraries with distinctive names (jQuery
  and jQuery UI, Bootstrap, Font Awesome, Foundation, Normalize, Animate, Modernizr, html5shiv,
  CKEditor, TinyMCE, Dojo, MochiKit, YUI, MathJax, Ace, Chart.js); Sphinx's
  docs?/_?(build|static|templates?|themes?)/, e.g. docs/_build and doc/_static.
  Not taken: cache/, dist/, deps/, tools/, env/, debian/, extern(al)/, test fixtures, vignettes,
  *.d.ts, configure, Vagrantfile, Jenkinsfile, gradlew, fabfile.py, and names generic enough to be
  a project's own (react.js, angular*.js, effects.js, controls.js...): these are often the
  project's own files, or its documentation.
raggity's own additions, for documentation builds, which linguist does not consider:
- Sphinx build output anywhere (not only under docs/): _static/, _sources/ (copies of the page
  sources, which would duplicate every page), searchindex.js; and the pages that only restate
  other pages: the general index (genindex.html, genindex-A.html..., or genindex/index.html from the
  dirhtml builder: every entry is a name from the page it links to), the module index
  (py-modindex.html) and viewcode's _modules/*.html (the project's Python source as HTML: every
  docstring in it is already on the API page autodoc built). On Sphinx's own documentation they
  were over a quarter of the chunks, and took a quarter of the top-5 slots for questions about its
  named entries (docs/ingestion.md);
- search indexes of other generators: Doxygen's search/ data (searchdata.js, all_0.js...), MkDocs'
  and rustdoc's search_index.json/search-index.js, Javadoc's *-search-index.js;
- the MkDocs Material theme's bundled search engine, assets/javascripts/lunr/: its tinyseg.js
  (a Japanese word segmenter, not minified) made 56 of the 88 chunks of a small MkDocs site;
- a site's pages about itself: the search page of a Sphinx or MkDocs build (known by the search
  index where it is) and any 404.html ("page not found"). In Flask's documentation they came
  second for "What happens when a page is not found?" and first for "How do I search for multiple
  words?";
- what Doxygen writes beside its pages (known by doxygen.css where it is): the index pages
  (member indexes by kind and letter, *-members.html, annotated.html, classes.html, files.html,
  modules.html, topics.html...), the source files as HTML (lmdb_8h_source.html) and its scripts
  and styles. Its pages themselves are read;
- minified content in any code or data file (kind "code": .js, .json, .css, .yaml...): a line of
  more than 4,000 characters in the first 64 KB. Nobody writes code or data lines that long by
  hand; bundlers and serializers do. Prose (Markdown, text, reST, HTML, PDF) is exempt: one
  paragraph per line is a normal way to write it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

GENERATED = "generated, minified or vendored (set [ingest] include_generated = true to index them)"

# How much of a file the content rules read.
HEAD_BYTES = 64 * 1024
# linguist's minified_files?: JS or CSS whose lines average more than this many characters.
_MINIFIED_AVERAGE = 110
# Ours: a line this long in code or data was written by a program.
_LONGEST_HAND_WRITTEN_LINE = 4000

_VENDORED_FOLDERS = re.compile(
    r"(?:^|/)(?:"
    r"node_modules|bower_components|[Vv]+endors?|third[-_]?party|3rd[-_]?party"
    r"|Pods|Godeps|Carthage/Build|__generated__|MathJax|ace-builds"
    r"|docs?/_?(?:build|themes?|templates?|static)"
    r"|_static|_sources"
    # the search engine the MkDocs Material theme bundles (lunr's language plugins, tinyseg.js...)
    r"|assets/javascripts/lunr"
    r")$"
)

_GENERATED_NAMES = re.compile(
    r"(?:^|/)(?:"
    # lock files (generated.rb)
    r"composer\.lock|Cargo\.lock|Gopkg\.lock|glide\.lock|poetry\.lock|pdm\.lock|uv\.lock|pixi\.lock"
    r"|(?:\w+\.)?esy\.lock|deno\.lock|npm-shrinkwrap\.json|package-lock\.json|pnpm-lock\.yaml"
    r"|Pipfile\.lock|\.terraform\.lock\.hcl|Package\.resolved|flake\.lock|MODULE\.bazel\.lock"
    r"|yarn\.lock|bun\.lockb?|Gemfile\.lock"
    r"|\.pnp\..*"
    # bundled libraries (vendor.yml)
    r"|jquery[^./]*\.js|jquery-\d\.\d+(?:\.\d+)?\.js|jquery-ui[^/]*\.(?:js|css)"
    r"|bootstrap[^./]*\.(?:js|css|less|scss|styl)|font-?awesome\.(?:css|less|scss|styl)"
    r"|foundation(?:\.[^/]*)?\.(?:js|css|less|scss|styl)|normalize\.(?:css|less|scss|styl)"
    r"|animate\.(?:css|less|scss|styl)|modernizr[-.][^/]*\.js|html5shiv\.js|ckeditor\.js"
    r"|tiny_mce[^./]*\.js|dojo\.js|MochiKit\.js|yahoo-[^./]*\.js|yui[^./]*\.js|Chart\.js"
    # documentation build data (ours)
    r"|searchindex\.js|search/searchdata\.js|search/[a-z]+_[0-9a-f]+\.(?:js|html)"
    r"|genindex(?:-[^/]+)?(?:/index)?\.html|[a-z]+-modindex(?:/index)?\.html|_modules/.+\.html"
    r"|search[-_]index\.(?:js|json)|[^/]+-search-index\.js"
    # a site's "page not found" page (Sphinx's notfound extension, MkDocs, Hugo, Jekyll...)
    r"|404(?:/index)?\.html"
    r")$"
    # minified names (vendor.yml), source maps and generated sources (generated.rb)
    r"|[.-]min\.(?:js|css)$|\.map$|\.designer\.(?:cs|vb)$|\.feature\.cs$|_tlb\.pas$"
    r"|.\.zep\.(?:c|h|php)$"
)


@dataclass(frozen=True)
class _Header:
    """A generator's mark among a file's first `lines` lines (generated.rb)."""

    suffixes: tuple[str, ...]
    lines: int
    mark: re.Pattern[str]


_HEADERS = (
    _Header((".go",), 40, re.compile(r"^// Code generated ", re.MULTILINE)),
    _Header(
        (".py", ".java", ".h", ".cc", ".cpp", ".m", ".rb", ".php"),
        3,
        re.compile(re.escape("Generated by the protocol buffer compiler.  DO NOT EDIT!")),
    ),
    _Header((".js",), 6, re.compile(re.escape("GENERATED CODE -- DO NOT EDIT!"))),
    _Header((".ts",), 1, re.compile(re.escape("Code generated by protoc-gen-ts_proto. DO NOT EDIT."))),
    _Header((".cpp", ".hpp", ".h", ".cc"), 1, re.compile(r"^// Generated by the gRPC", re.MULTILINE)),
    _Header(
        (".rb", ".py", ".go", ".js", ".m", ".java", ".h", ".cc", ".cpp", ".php"),
        6,
        re.compile(re.escape("Autogenerated by Thrift Compiler")),
    ),
    _Header((".c", ".cpp"), 1, re.compile(re.escape("Generated by Cython"))),
    _Header((".h",), 1, re.compile(re.escape("/* DO NOT EDIT THIS FILE - it is machine generated */"))),
    _Header((".js",), 5, re.compile(r"Generated by PEG\.js")),
    _Header(
        (".js",), 1, re.compile(r"^/\* (?:parser generated by jison|generated by jison-lex) ", re.MULTILINE)
    ),
    _Header((".js",), 1, re.compile(r"^// Generated by ", re.MULTILINE)),
    _Header((".rb",), 3, re.compile(r"^# This file is automatically generated by Racc", re.MULTILINE)),
    _Header(
        (".java",),
        1,
        re.compile(
            r"^(?:/\* The following code was generated by JFlex "
            r"|// This is a generated file\. Not intended for manual editing\.)",
            re.MULTILINE,
        ),
    ),
    _Header((".java",), 2, re.compile(re.escape("This file is generated by jOOQ."))),
)
_SOURCE_MAP_REFERENCE = re.compile(r"^/[*/][#@] source(?:Mapping)?URL|sourceURL=", re.MULTILINE)


def vendored_folder(rel: str) -> bool:
    """Whether the folder `rel` ("/"-separated, relative to the ingested root) holds bundled copies
    or build output."""
    return _VENDORED_FOLDERS.search(rel) is not None


def generated_name(rel: str) -> bool:
    """Whether the file `rel` is generated or bundled, judged by its path alone."""
    return _GENERATED_NAMES.search(rel) is not None


# The search indexes of Sphinx and MkDocs, at the root of their build beside its search page.
_SEARCH_INDEXES = ("searchindex.js", os.path.join("search", "search_index.json"))

# What Doxygen writes beside its pages (names relative to the folder holding doxygen.css): index
# pages whose every entry is a name or a one-line brief from the page it links to, source files
# as HTML (their comments are on the pages already, as with Sphinx's viewcode: Doxygen writes
# "lmdb.h" as "lmdb_8h"), and its scripts and styles. The member indexes are split by kind and
# letter ("functions_func_b.html", "globals_0x7e.html"); a page a project names
# "functions_overview" is its own.
_DOXYGEN_FILES = re.compile(
    r"(?:globals|functions|namespacemembers)"
    r"(?:_(?:func|vars|type|enum|eval|defs|rela|prop|evnt|sequ|dict))?(?:_(?:[^/._]|0x[0-9a-f]+))?\.html"
    r"|(?:annotated|classes|concepts|examples|files|graph_legend|hierarchy|inherits|modules|namespaces"
    r"|pages|topics)\.html"
    r"|[^/]*-members\.html|[^/]*_8[^/]*_source\.html"
    r"|[^/]+\.(?:js|css)"
    r"|search/(?:search\.js|search\.css|nomatches\.html)"
)


def builder_output(path: str) -> bool:
    """Whether `path` is what a documentation builder writes about its site rather than its subject,
    known by what the builder put beside it (a name alone would also match a project's own files):
    - the search page of a Sphinx or MkDocs build: "search.html" where the build's search index
      is, or Sphinx dirhtml's "search/index.html" below "searchindex.js" (and no "search.html",
      which would make it a page of the project's own). Its only text is how to search
      ("Searching for multiple words only shows matches that contain all words."), which
      questions about searching then retrieved;
    - Doxygen's index pages, source listings, scripts and styles, where doxygen.css is: a quarter
      of the chunks of LMDB's API documentation (270 of 1,076)."""
    folder, name = os.path.split(path)
    if name == "search.html":
        return any(os.path.isfile(os.path.join(folder, index)) for index in _SEARCH_INDEXES)
    parent, below = os.path.split(folder)
    if below == "search":
        if name == "index.html":
            return os.path.isfile(os.path.join(parent, "searchindex.js")) and not os.path.isfile(
                os.path.join(parent, "search.html")
            )
        folder, name = parent, f"search/{name}"
    return _DOXYGEN_FILES.fullmatch(name) is not None and os.path.isfile(os.path.join(folder, "doxygen.css"))


def generated_content(suffix: str, head: str, *, whole: bool) -> bool:
    """Whether a code or data file whose text starts with `head` was written by a program;
    `whole`: `head` is the whole file (its last lines are the file's)."""
    lines = head.split("\n")
    if any(len(line) > _LONGEST_HAND_WRITTEN_LINE for line in lines):
        return True
    suffix = suffix.lower()
    if suffix in (".js", ".css"):
        if sum(len(line) for line in lines) // len(lines) > _MINIFIED_AVERAGE:
            return True
        if whole and _SOURCE_MAP_REFERENCE.search("\n".join(lines[-2:])):
            return True
    return any(
        suffix in header.suffixes and header.mark.search("\n".join(lines[: header.lines]))
        for header in _HEADERS
    )
