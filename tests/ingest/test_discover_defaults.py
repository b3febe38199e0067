"""What a walk leaves out by default: hidden and credential files, the index, bad names, generated files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from raggity.config.schema import IngestConfig
from raggity.documents.discover import BAD_NAME, PAGE_SOURCE, Discovery, discover
from raggity.documents.generated import GENERATED
from raggity.documents.private_files import CREDENTIALS, HIDDEN, may_hold_credentials
from tests.ingest.test_discover import found, make, run


def excluded(discovery: Discovery, root: Path) -> dict[str, str]:
    return {s.path.removeprefix(f"{root}/"): s.reason for s in discovery.excluded}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder.resolve()


# --- hidden folders and credentials (#12 item 4) ----------------------------------------------------

SECRETS_AT_HOME = [
    ".aws/credentials.json", ".aws/config.yaml", ".config/gh/hosts.yml", ".docker/config.json",
    ".ssh/config.txt", ".gnupg/notes.txt", ".kube/config.yaml", ".local/share/keys.json",
]  # fmt: skip


def test_hidden_folders_are_left_out_once_each_and_said_why(root: Path) -> None:
    make(root, "notes.md", *SECRETS_AT_HOME)
    discovery = run(root)
    assert found(discovery, root) == ["notes.md"]
    # One entry per folder, not per file: a hidden folder is not walked at all.
    assert excluded(discovery, root) == {
        f"{name}/": HIDDEN for name in (".aws", ".config", ".docker", ".ssh", ".gnupg", ".kube", ".local")
    }
    assert discovery.skipped == ()


def test_hidden_files_are_left_out_and_read_when_asked(root: Path) -> None:
    make(root, "a.md", ".notes.md", "sub/.draft.txt")
    discovery = run(root)
    assert found(discovery, root) == ["a.md"]
    assert excluded(discovery, root) == {".notes.md": HIDDEN, "sub/.draft.txt": HIDDEN}
    assert found(run(root, include_hidden=True), root) == [".notes.md", "a.md", "sub/.draft.txt"]


def test_git_and_the_index_stay_unread_even_with_hidden_files_included(root: Path) -> None:
    make(root, "a.md", ".git/x.md", ".raggity/y.md")
    assert found(run(root, include_hidden=True), root) == ["a.md"]


@pytest.mark.parametrize(
    "name",
    [
        "credentials.json", "client_secret_123.apps.json", "secrets.yaml", "secrets.toml",
        "application_default_credentials.json", "Secrets.yml",
    ],
)  # fmt: skip
def test_credential_files_are_left_out_even_with_hidden_files_included(root: Path, name: str) -> None:
    make(root, "a.md", name, f"deploy/{name}")
    for discovery in (run(root), run(root, include_hidden=True, include_generated=True)):
        assert found(discovery, root) == ["a.md"]
        assert excluded(discovery, root) == {name: CREDENTIALS, f"deploy/{name}": CREDENTIALS}


@pytest.mark.parametrize(
    "name",
    [
        "id_rsa", "id_ed25519", ".netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", "credentials",
        "server.pem", "tls.key", "cert.p12", "store.jks", ".env", ".env.production", "prod.tfvars",
    ],
)  # fmt: skip
def test_key_and_login_files_are_known_even_where_their_type_is_not_read(name: str) -> None:
    """Today raggity reads none of these types; the rule still holds if a reader for them is added."""
    assert may_hold_credentials(name)


@pytest.mark.parametrize("name", ["credentials.md", "secrets.md", "keys.json", "env.txt", "id_rsa.md"])
def test_documents_about_credentials_are_read(root: Path, name: str) -> None:
    make(root, name)
    assert found(run(root), root) == [name]


def test_a_credential_file_named_as_the_path_is_read(root: Path) -> None:
    make(root, "credentials.json", content="{}\n")
    assert discover([root / "credentials.json"], IngestConfig()).files == (root / "credentials.json",)


def test_a_hidden_root_is_walked(root: Path) -> None:
    make(root, ".notes/a.md", ".notes/.b.md")
    assert found(run(root / ".notes"), root / ".notes") == ["a.md"]


# --- the index folder (#12 item 5) ----------------------------------------------------------------


@pytest.mark.parametrize("index_name", ["my-index", "docs/built/idx", ".raggity"])
def test_the_index_folder_is_never_read_under_any_name(root: Path, index_name: str) -> None:
    make(root, "a.md", f"{index_name}/manifest.json", f"{index_name}/cache/answers.json")
    discovery = discover([root], IngestConfig(include_hidden=True), index_dir=root / index_name)
    assert found(discovery, root) == ["a.md"]
    assert discovery.skipped == discovery.excluded == ()


def test_the_index_folder_is_not_read_through_a_link(root: Path, tmp_path: Path) -> None:
    index = tmp_path / "elsewhere" / "index"
    make(index, "manifest.json")
    make(root, "a.md")
    (root / "linked").symlink_to(index)
    (root / "manifest.json").symlink_to(index / "manifest.json")
    config = IngestConfig(follow_symlinks=True)
    assert found(discover([root], config, index_dir=index), root) == ["a.md"]


def test_a_root_inside_the_index_is_skipped(root: Path) -> None:
    make(root, "idx/manifest.json")
    discovery = discover([root / "idx"], IngestConfig(), index_dir=root / "idx")
    assert discovery.files == ()
    assert [s.reason for s in discovery.skipped] == ["inside raggity's index folder"]


# --- names that are not UTF-8 (#12 item 9) -------------------------------------------------------


def test_a_name_that_is_not_utf8_is_skipped_and_shown_escaped(root: Path) -> None:
    make(root, "good.md", "sub/also.md")
    with open(os.path.join(os.fsencode(root), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"bad name\n")
    os.makedirs(os.path.join(os.fsencode(root), b"dir\xff"))
    with open(os.path.join(os.fsencode(root), b"dir\xff", b"inside.md"), "wb") as handle:
        handle.write(b"under a bad folder name\n")
    discovery = run(root)
    assert found(discovery, root) == ["good.md", "sub/also.md"]
    assert [(s.path, s.reason) for s in discovery.skipped] == [
        (f"{root}/caf\\xe9.md", BAD_NAME),
        (f"{root}/dir\\xff/", BAD_NAME),
    ]
    # What is reported can be printed and stored: no lone surrogates.
    for entry in discovery.skipped:
        entry.path.encode("utf-8")


# --- generated, minified and vendored files (#13 item 1) --------------------------------------------

SPHINX_BUILD = {
    "index.html": "<html><body><h1>Docs</h1><p>Welcome.</p></body></html>\n",
    "library/copy.html": "<html><body><p>copy.deepcopy</p></body></html>\n",
    "_static/jquery.js": "/*! jQuery */\n(function(){})();\n",
    "_static/doctools.js": "var Documentation = {};\n",
    "_static/basic.css": "body { margin: 0 }\n",
    "_sources/index.rst.txt": "Docs\n====\n\nWelcome.\n",
    "searchindex.js": 'Search.setIndex({"docnames": ["index"], "terms": {"a": [0]}})\n',
    "genindex.html": "<html><body><p>Index</p></body></html>\n",
    "genindex-A.html": "<html><body><p>abs() (built-in function)</p></body></html>\n",
    "py-modindex.html": "<html><body><p>copy: Shallow and deep copy.</p></body></html>\n",
    "_modules/copy.html": "<html><body><h1>Source code for copy</h1><pre>def deepcopy(x):</pre></body></html>\n",
    "_modules/index.html": "<html><body><h1>All modules for which code is available</h1></body></html>\n",
    "search.html": "<html><body><h1>Search</h1><p>Searching for multiple words only shows matches",
    "404.html": "<html><body><h1>Page Not Found</h1><p>The page you requested does not exist.</p>",
}


def test_a_sphinx_build_gives_its_pages_and_not_its_assets(root: Path) -> None:
    for name, text in SPHINX_BUILD.items():
        make(root, name, content=text)
    discovery = run(root)
    assert found(discovery, root) == ["index.html", "library/copy.html"]
    assert excluded(discovery, root) == {
        "_sources/": GENERATED,
        "_static/": GENERATED,
        "searchindex.js": GENERATED,
        # Pages that restate other pages: the indexes of names, and viewcode's copies of the source.
        "genindex.html": GENERATED,
        "genindex-A.html": GENERATED,
        "py-modindex.html": GENERATED,
        "_modules/copy.html": GENERATED,
        "_modules/index.html": GENERATED,
        # The site's own pages: how to search it, and "page not found".
        "search.html": GENERATED,
        "404.html": GENERATED,
    }
    everything = run(root, include_generated=True)
    assert len(everything.files) == len(SPHINX_BUILD)
    assert everything.excluded == ()


def test_the_dirhtml_builders_index_pages_are_left_out_too(root: Path) -> None:
    make(root, "genindex/index.html", "py-modindex/index.html", "guide/index.html")
    assert found(run(root), root) == ["guide/index.html"]


def test_a_search_page_is_left_out_only_where_a_build_put_its_search_index(root: Path) -> None:
    make(
        root,
        "sphinx/searchindex.js",
        "sphinx/search.html",
        "dirhtml/searchindex.js",
        "dirhtml/search/index.html",
    )
    make(root, "mkdocs/search/search_index.json", "mkdocs/search.html", "mkdocs/guide.html")
    make(root, "site/search.html", "site/research/index.html", "notes/404-errors.html")
    # A project's own page named "search": MkDocs with directory URLs writes search.md as
    # search/index.html, and Sphinx's html builder beside its own search.html.
    make(root, "mkdirs/search/search_index.json", "mkdirs/search/index.html")
    make(root, "html/searchindex.js", "html/search.html", "html/search/index.html")
    # A build whose own folder is named "search" still has its search page.
    make(root, "search/searchindex.js", "search/search.html")
    assert found(run(root), root) == [
        "html/search/index.html", "mkdirs/search/index.html", "mkdocs/guide.html",
        "notes/404-errors.html", "site/research/index.html", "site/search.html",
    ]  # fmt: skip


def test_an_mkdocs_material_build_gives_its_pages_and_not_its_assets(root: Path) -> None:
    make(root, "index.html", "reference/index.html", "404.html", "search/search_index.json", "search.html")
    make(root, "assets/javascripts/lunr/tinyseg.js", "assets/javascripts/lunr/min/lunr.ja.min.js")
    discovery = run(root)
    assert found(discovery, root) == ["index.html", "reference/index.html"]
    assert excluded(discovery, root) == {
        "404.html": GENERATED,
        "assets/javascripts/lunr/": GENERATED,
        "search.html": GENERATED,
        "search/search_index.json": GENERATED,
    }
    # A project's own scripts beside them are read.
    make(root, "assets/javascripts/app.js")
    assert "assets/javascripts/app.js" in found(run(root), root)


def test_doxygen_output_gives_its_pages_and_not_its_indexes_listings_or_theme(root: Path) -> None:
    pages = ["index.html", "group__mdb.html", "mdb_8c.html", "starting.html", "todo.html"]
    made = ["globals.html", "globals_func.html", "functions_vars.html", "annotated.html", "classes.html"]
    made += ["files.html", "modules.html", "pages.html", "lmdb_8h_source.html", "menudata.js"]
    made += ["dynsections.js", "search/search.js", "search/nomatches.html", "doxygen.css"]
    made += ["functions_func_b.html", "globals_0x7e.html", "class_foo-members.html", "topics.html"]
    made += ["group__mdb_dup.js", "darkmode_toggle.js"]
    # Pages a project named so: Markdown pages become md_*.html, \page names are kept.
    pages += ["md_docs_open_source.html", "functions_overview.html", "globals_config.html"]
    make(root, *[f"html/{name}" for name in pages + made])
    make(root, "notes/files.html", "notes/menu.js", "notes/modules.html")
    discovery = run(root)
    # Without doxygen.css beside them, the same names are a project's own files.
    assert found(discovery, root) == sorted(
        [f"html/{name}" for name in pages] + ["notes/files.html", "notes/menu.js", "notes/modules.html"]
    )
    assert excluded(discovery, root) == {f"html/{name}": GENERATED for name in made}


def test_only_the_html_of_a_modules_folder_is_sphinx_output(root: Path) -> None:
    make(root, "_modules/helper.py", "_modules/notes.md", "docs/search-modindex.md")
    assert found(run(root), root) == ["_modules/helper.py", "_modules/notes.md", "docs/search-modindex.md"]


@pytest.mark.parametrize(
    "name",
    [
        "package-lock.json", "pnpm-lock.yaml", "npm-shrinkwrap.json", "app.min.js", "site-min.css",
        "vendor/lib/x.py", "third_party/zlib/zlib.h", "bower_components/a/b.js", "docs/_build/html/a.html",
        "web/jquery-3.6.0.js", "web/bootstrap-theme.css", "Form1.designer.cs", "search/searchdata.js",
        "search/all_0.js", "site/search/search_index.json", "api/member-search-index.js",
    ],
)  # fmt: skip
def test_generated_names_are_left_out(root: Path, name: str) -> None:
    make(root, "a.md", name)
    assert found(run(root), root) == ["a.md"]
    assert set(excluded(run(root), root).values()) == {GENERATED}
    assert name in found(run(root, include_generated=True), root)


@pytest.mark.parametrize(
    "name", ["src/vendored.py", "dist/index.html", "tools/build.py", "docs/index.md", "search/search.js"]
)
def test_own_files_with_similar_names_are_read(root: Path, name: str) -> None:
    make(root, name)
    assert found(run(root), root) == [name]


def test_minified_code_and_data_are_left_out_by_content(root: Path) -> None:
    make(root, "bundle.js", content="var a=1;" * 40 + "\n")  # 320-character lines: linguist's rule
    make(root, "data.json", content='{"k": "' + "v" * 4000 + '"}\n')  # one 4,009-character line
    make(root, "hand.json", content='{"k": "' + "v" * 3000 + '"}\n')  # long, but not past the limit
    make(root, "mapped.js", content="var a = 1;\n//# sourceMappingURL=mapped.js.map\n")
    make(root, "gen.go", content="// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n")
    make(root, "ok.js", content="function f() {\n  return 1;\n}\n")
    make(root, "ok.go", content="package x\n\n// Code here is hand written.\n")
    discovery = run(root)
    assert found(discovery, root) == ["hand.json", "ok.go", "ok.js"]
    assert excluded(discovery, root) == dict.fromkeys(
        ["bundle.js", "data.json", "gen.go", "mapped.js"], GENERATED
    )


def test_prose_with_long_lines_is_read(root: Path) -> None:
    paragraph = "A sentence that goes on. " * 400 + "\n"  # 10,000 characters
    make(root, "long.md", "long.txt", "page.html", content=paragraph)
    assert found(run(root), root) == ["long.md", "long.txt", "page.html"]


def test_a_generated_file_named_as_the_path_is_read(root: Path) -> None:
    make(root, "app.min.js", content="var a=1;" * 40 + "\n")
    assert discover([root / "app.min.js"], IngestConfig()).files == (root / "app.min.js",)


# --- include and exclude globs use the same linear matching as ignore files (#12 item 10) ----------

_GLOB_SCRIPT = """
import sys
from pathlib import Path
from raggity.config.schema import IngestConfig
from raggity.documents.discover import discover

config = IngestConfig(exclude=["a*a*a*a*a*a*a*a*a*a*b.md"], include=["**/x/**/x/**/x/**/x/**/*.md"])
print(len(discover([Path(sys.argv[1])], config).files))
"""


def test_hostile_include_and_exclude_globs_finish(root: Path) -> None:
    """pathspec's own regexes need hours for these names (fails by the subprocess timeout before)."""
    deep = root.joinpath(*(["x"] * 60))
    make(deep, "a" * 60 + ".md", "a" * 60 + "b.md")
    done = subprocess.run(
        [sys.executable, "-c", _GLOB_SCRIPT, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split() == ["1"]


# --- a page's source beside the page ----------------------------------------------------------------


def test_a_pages_source_beside_its_html_is_left_out(root: Path) -> None:
    """git's documentation ships git-stash.txt (AsciiDoc) beside git-stash.html: read both, and each
    page took two of the top five results."""
    make(root, "git-stash.txt", "git-stash.html", "notes.md", "notes.htm", "guide.rst", "sub/guide.html")
    make(root, "diff-options.txt", "README", "README.html", "data.json", "data.html")
    discovery = run(root)
    # A fragment with no page of its own, a page in another folder, and code stay.
    assert found(discovery, root) == [
        "README.html", "data.html", "data.json", "diff-options.txt", "git-stash.html",
        "guide.rst", "notes.htm", "sub/guide.html",
    ]  # fmt: skip
    assert excluded(discovery, root) == {
        "git-stash.txt": PAGE_SOURCE,
        "notes.md": PAGE_SOURCE,
        "README": PAGE_SOURCE,
    }
    assert len(run(root, include_generated=True).files) == 11


def test_the_source_stays_when_its_page_is_not_read(root: Path) -> None:
    make(root, "a.txt", "a.html", "b.txt", "b.html", "c.md", "c.html/inner.md")
    # "a.html" excluded by the config, "b.html" ignored: the source is then the only copy.
    (root / ".gitignore").write_text("b.html\n", encoding="utf-8")
    assert found(run(root, exclude=["a.html"]), root) == ["a.txt", "b.txt", "c.html/inner.md", "c.md"]


def test_the_source_stays_when_its_page_is_skipped(root: Path) -> None:
    """Only the walk's end knows whether a page was read: one too large to read is skipped."""
    make(root, "guide.md", "notes.md", "notes.html")
    (root / "guide.html").write_text("x" * 2_000_000, encoding="utf-8")
    discovery = run(root, max_file_mb=1)
    assert found(discovery, root) == ["guide.md", "notes.html"]
    assert excluded(discovery, root) == {"notes.md": PAGE_SOURCE}


def test_sphinx_copies_of_sources_are_left_out_through_any_path(root: Path) -> None:
    """Debian's Sphinx packages link html/_sources as rst/ beside html/: through the link, every
    page was read a second time."""
    make(root, "html/index.html", "html/guide/intro.html", "html/api/index.html", "html/old.html")
    make(root, "html/_sources/index.rst.txt", "html/_sources/guide/intro.rst.txt")
    make(root, "html/_sources/api.md.txt", "html/_sources/old.txt", "html/_sources/orphan.rst.txt")
    make(root, "html/v1.2.html", "html/_sources/v1.2.txt", "html/notes.html", "html/_sources/notes.myst.txt")
    (root / "rst").symlink_to(root / "html" / "_sources", target_is_directory=True)
    discovery = run(root)
    # A copy with no page (the page removed, or never built) is the only text there is.
    assert found(discovery, root) == [
        "html/api/index.html", "html/guide/intro.html", "html/index.html", "html/notes.html",
        "html/old.html", "html/v1.2.html", "rst/orphan.rst.txt",
    ]  # fmt: skip
    assert excluded(discovery, root) == {
        "html/_sources/": GENERATED,
        "rst/api.md.txt": PAGE_SOURCE,
        "rst/guide/intro.rst.txt": PAGE_SOURCE,
        "rst/index.rst.txt": PAGE_SOURCE,
        "rst/notes.myst.txt": PAGE_SOURCE,  # whatever the project's source suffix
        "rst/old.txt": PAGE_SOURCE,
        "rst/v1.2.txt": PAGE_SOURCE,  # Sphinx before 1.5: <page>.txt
    }
    # Roots in any order: the pages' walk may come after the one that found their copies.
    copies_first = discover([root / "rst", root / "html"], IngestConfig())
    assert [p.name for p in copies_first.files if p.suffix == ".txt"] == ["orphan.rst.txt"]
    # The copy stays when its page is not read, and with include_generated.
    assert "rst/guide/intro.rst.txt" in found(run(root, exclude=["html/guide/"]), root)
    assert len(run(root, include_generated=True).files) == 13
