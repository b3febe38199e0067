"""A documentation question set from packaged FAQ pages: the FAQ removed from the docs, its answers as gold.

    python -m bench.docs_questions build [--out /tmp/docsq/sets] [--sets git,django]
    python -m bench.docs_questions score DETAILS.jsonl --set /tmp/docsq/sets/git/beir

`build` needs Debian's documentation packages (`apt-get install git-doc python-django-doc`); nothing of
them is committed here. For each set it writes, under OUT/NAME/:

- `docs/`: the package's HTML pages without the FAQ pages, for `rag ingest` (the path a user takes);
- `beir/`: the same pages in the layout `rag eval --answers` reads (docs/evaluation.md): corpus.jsonl
  (one document per page, `_id` its path under docs/, text as raggity's HTML reader extracts it; the
  format has a title and no headings, so in `rag eval` every chunk's heading trail is the page's title,
  where `rag ingest docs/` gives "git-update-index(1) Manual Page > NOTES": BM25, the embedder and
  focusing see less of a page's structure here than a user's index has),
  queries.jsonl and qrels/test.tsv (each answerable question judged against its gold pages), and
  questions.jsonl (every FAQ question whose answer links to a page left in the docs);
- `ooc/`: out-of-corpus questions for `--abstain-queries`: the other set's FAQ questions, which these
  docs cannot answer (a complete BEIR folder: their FAQ answers are its corpus).

A question's gold pages are the pages its FAQ answer links to (the FAQ says "see X": X answers it),
so a question whose answer links nowhere else is left out and counted. Its `answers` (what
`rag eval` matches, any one of them counting as "correct") are its key facts; questions.jsonl also
holds `gold_text` (the FAQ answer) and `key_facts`, which `rag eval` ignores.

The key-facts rule (what `score` judges, stated once here and in the report):
1. Key facts of a gold answer, in the order they appear in it: its inline code spans (`<code>`, `<tt>`,
   `<kbd>`, Sphinx literals; not whole code blocks), then numbers in its prose (`1.1`, `100`), each
   whitespace-collapsed, lowercased and stripped of quotes and trailing punctuation; duplicates,
   one-character facts, facts the question already holds and words on more than half of the corpus
   pages (`git`) dropped; the first MAX_FACTS kept.
2. An answer with no such fact falls back to its terms: words of 5+ letters that are neither in the
   question nor English function words, the first MAX_FACTS distinct ones, matched on their first 5
   letters (so "configured" matches "configure").
3. A fact is present when it occurs in the answer (markers removed, lowercased, whitespace collapsed)
   as a substring (a fact that is one short word, as a whole word); a fact of several words also counts
   when every word of it is a word of the answer.
4. An answer is right when it was not declined and at least half of its key facts (rounded up) are present.
5. Measured beside it, leniently: "partly right" when it holds at least one code or number fact of the
   whole gold answer (`all_facts`, not only the first MAX_FACTS): FAQ answers list alternatives, and an
   answer giving the second one (`core.editor` where the gold starts with VISUAL) is not wrong.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from raggity.evaluation.calibration_split import in_calibration_split

MAX_FACTS = 4
DEFAULT_OUT = Path("/tmp/docsq/sets")
_MARKER = re.compile(r"\[\d+\]")
# A number standing on its own in prose: not part of a name (UTF-8, ed25519) nor a manual section (git(1)).
_NUMBER = re.compile(r"(?<![\w.(/-])\d+(?:\.\d+)*(?![\w)/-])")
_WORD = re.compile(r"[a-z][a-z0-9_'-]*")
_FUNCTION_WORDS = frozenset(
    """about above after again against because before being below between could doesn't don't during
    every first having other their there these those through under until where which while would
    should really might shall your yours yourself itself myself using without within since still
    something anything nothing always never often usually however though although also just like
    because further another either neither""".split()
)


@dataclass(frozen=True)
class DocSet:
    """One package's documentation: where it is installed, its FAQ pages, how their questions are marked."""

    name: str
    package: str
    root: Path
    faq_pages: tuple[str, ...]
    style: str  # "asciidoc" (questions are <dt>, answers the <dd>) or "sphinx" (questions are <h2>/<h3>)
    skip_dirs: tuple[str, ...] = ()
    skip_pages: tuple[str, ...] = ()
    # git's manual pages are named after commands: an answer naming `git commit` or gitcredentials(7)
    # points at git-commit.html or gitcredentials.html as surely as a link would.
    named_pages: bool = False


SETS = {
    "git": DocSet(
        name="git",
        package="git-doc",
        root=Path("/usr/share/doc/git-doc"),
        faq_pages=("gitfaq.html",),
        style="asciidoc",
        named_pages=True,
    ),
    "django": DocSet(
        name="django",
        package="python-django-doc",
        root=Path("/usr/share/doc/python-django-doc/html"),
        faq_pages=tuple(
            f"faq/{p}.html"
            for p in (
                "general",
                "install",
                "usage",
                "models",
                "admin",
                "troubleshooting",
                "help",
                "contributing",
            )
        ),
        style="sphinx",
        # Highlighted source code, static files, the release notes (276 pages of changelog) and the
        # generated index pages are not documentation a question is answered from.
        skip_dirs=("_modules", "_static", "_images", "_sources", "releases", "faq"),
        skip_pages=("genindex.html", "search.html", "py-modindex.html"),
    ),
}


@dataclass(frozen=True)
class FaqEntry:
    page: str
    anchor: str
    question: str
    answer_text: str
    spans: tuple[str, ...]  # the answer's inline code spans, in order
    links: tuple[str, ...]  # pages (relative to the docs root) the answer links to
    id: str = field(default="")


def _squash(text: str) -> str:
    return " ".join(text.split())


def _normalise_fact(text: str) -> str:
    return _squash(text).lower().strip("'\"‘’“”`").rstrip(".,;:!?")


def key_facts(
    code_spans: Iterable[str],
    prose: str,
    question: str,
    pages_with: Callable[[str], int],
    limit: int = MAX_FACTS,
    common: frozenset[str] = frozenset(),
) -> tuple[str, ...]:
    """The key facts of a gold answer by the rule in the module docstring; `pages_with(word)` counts
    the corpus pages holding a word, to rank the fallback terms rarest first."""
    asked = _squash(question).lower()
    facts: list[str] = []
    for span in code_spans:
        fact = _normalise_fact(span)
        # A word on most pages (`git` in git's manual) says nothing of this answer.
        if len(fact) > 1 and fact not in facts and fact not in asked and fact not in common:
            facts.append(fact)
    for number in _NUMBER.findall(prose):
        if number not in facts and number not in asked:
            facts.append(number)
    if facts:
        return tuple(facts[:limit])
    asked_stems = {w[:5] for w in _WORD.findall(asked)}
    terms: list[str] = []
    for found in _WORD.findall(prose.lower()):
        word = found.strip("'-")
        fresh = not any(t[:5] == word[:5] for t in terms)
        if len(word) >= 5 and word not in _FUNCTION_WORDS and word[:5] not in asked_stems and fresh:
            terms.append(word)
    # Rarest first: a word on few pages says more of this answer than "please" or "django" does.
    ranked = sorted(terms, key=lambda t: (pages_with(t[:5]), terms.index(t)))
    return tuple(ranked[:MAX_FACTS])  # fallback terms are never "all": the rarest few stand for the answer


def fact_present(fact: str, answer: str) -> bool:
    said = _squash(_MARKER.sub(" ", answer)).lower()
    if " " not in fact and fact.isalpha() and len(fact) >= 5 and not re.search(r"[._/-]", fact):
        # Fallback terms (and plain words) match on their first five letters, a crude stem.
        return any(w.startswith(fact[:5]) for w in _WORD.findall(said))
    if re.fullmatch(r"\w+", fact):
        # A short word (`ort`, `vi`, `100`) counts only whole: "sort" does not hold "ort".
        return re.search(rf"(?<!\w){re.escape(fact)}(?!\w)", said) is not None
    if fact in said:
        return True
    words = set(_WORD.findall(said)) | set(said.split())
    parts = fact.split()
    return len(parts) > 1 and all(p in words for p in parts)


def judge(answer: str, declined: bool, facts: Sequence[str]) -> tuple[bool, int]:
    """(right by the key-facts rule, how many facts the answer holds)."""
    held = sum(fact_present(f, answer) for f in facts)
    return (not declined and bool(facts) and held >= math.ceil(len(facts) / 2)), held


def partly_right(answer: str, declined: bool, all_facts: Sequence[str]) -> bool:
    """The lenient measure: not declined and holding at least one code or number fact of the whole
    gold answer (any of its alternatives: `core.editor` where the gold lists VISUAL first)."""
    return not declined and any(fact_present(f, answer) for f in all_facts)


# --- reading the FAQ pages -------------------------------------------------------------------------


def _code_spans(node: LexborNode) -> list[str]:
    spans = []
    for code in node.css("code, tt, kbd, span.pre"):
        # Sphinx wraps each word of a literal in span.pre inside a <code>: take the outer one only.
        parent = code.parent
        inner = False
        while parent is not None and parent.mem_id != node.mem_id:
            if parent.tag in ("code", "tt", "kbd", "pre"):
                inner = True
                break
            parent = parent.parent
        if not inner:
            spans.append(code.text(deep=True))
    return spans


def _prose(node: LexborNode) -> str:
    parts = []
    for block in node.css("p, li, td"):
        parts.append(block.text(deep=True))
    return _squash(" ".join(parts)) if parts else _squash(node.text(deep=True))


def _links(nodes: Sequence[LexborNode], page: str) -> list[str]:
    base = Path(page).parent
    found: list[str] = []
    for node in nodes:
        for a in node.css("a[href]"):
            href = (a.attributes.get("href") or "").split("#")[0]
            if not href or "://" in href or href.startswith("mailto:") or not href.endswith(".html"):
                continue
            target = (base / href).as_posix()
            parts: list[str] = []
            for part in target.split("/"):
                if part == "..":
                    if parts:
                        parts.pop()
                elif part not in (".", ""):
                    parts.append(part)
            resolved = "/".join(parts)
            if resolved not in found:
                found.append(resolved)
    return found


_MAN_REF = re.compile(r"\b(git[a-z-]*)\(\d\)")
_CONFIG_KEY = re.compile(r"^[a-z][a-zA-Z0-9]*\.[a-zA-Z0-9.<>*-]+$")


def named_pages(code_spans: Iterable[str], prose: str) -> list[str]:
    """Manual pages an answer names: `git cmd ...` -> git-cmd.html, gitfoo(5) -> gitfoo.html, and a
    configuration key (`user.name`) -> git-config.html."""
    found: list[str] = []
    for span in code_spans:
        words = span.split()
        if len(words) >= 2 and words[0] == "git" and re.fullmatch(r"[a-z][a-z-]+", words[1]):
            found.append(f"git-{words[1]}.html")
        elif len(words) == 1 and _CONFIG_KEY.match(words[0]):
            found.append("git-config.html")
    found += [f"{name}.html" for name in _MAN_REF.findall(prose)]
    return list(dict.fromkeys(found))


def _asciidoc_entries(tree: LexborHTMLParser, page: str) -> list[FaqEntry]:
    entries = []
    for dt in tree.css("dt.hdlist1"):
        dd = dt.next
        while dd is not None and dd.tag != "dd":
            dd = dd.next
        if dd is None:
            continue
        question = _squash(dt.text(deep=True))
        first = dd.css_first("[id]")
        anchor = first.attributes.get("id") or "" if first is not None else ""
        prose = _prose(dd)
        entries.append(
            FaqEntry(
                page,
                anchor,
                question,
                prose,
                tuple(_code_spans(dd)),
                tuple(
                    dict.fromkeys([*_links([dd], page), *named_pages(_code_spans(dd), dd.text(deep=True))])
                ),
            )
        )
    return entries


def _sphinx_entries(tree: LexborHTMLParser, page: str) -> list[FaqEntry]:
    entries = []
    for section in tree.css("section, div.section"):
        heading = section.css_first("h2, h3")
        if heading is None or heading.parent is None or heading.parent.mem_id != section.mem_id:
            continue
        question = _squash(heading.text(deep=True)).rstrip("¶").strip()
        # The answer: the section's own blocks after its heading, not its subsections.
        blocks = []
        node = heading.next
        while node is not None:
            if (
                node.is_element_node
                and node.tag not in ("section",)
                and "section" not in (node.attributes.get("class") or "").split()
            ):
                blocks.append(node)
            node = node.next
        if not blocks:
            continue
        spans = [s for b in blocks for s in _code_spans(b)]
        prose = _squash(" ".join(_prose(b) if b.tag not in ("p",) else b.text(deep=True) for b in blocks))
        entries.append(
            FaqEntry(
                page,
                section.attributes.get("id") or "",
                question,
                prose,
                tuple(spans),
                tuple(_links(blocks, page)),
            )
        )
    return entries


def faq_entries(docset: DocSet) -> list[FaqEntry]:
    entries: list[FaqEntry] = []
    for page in docset.faq_pages:
        tree = LexborHTMLParser((docset.root / page).read_text(encoding="utf-8", errors="replace"))
        read = _asciidoc_entries if docset.style == "asciidoc" else _sphinx_entries
        for entry in read(tree, page):
            ident = f"{docset.name}-" + hashlib.sha256(f"{page}#{entry.question}".encode()).hexdigest()[:10]
            entries.append(FaqEntry(**{**entry.__dict__, "id": ident}))
    return entries


# --- building the set ------------------------------------------------------------------------------


def doc_pages(docset: DocSet) -> list[str]:
    """The HTML pages left in the docs: every page but the FAQ's and the skipped ones."""
    pages = []
    for path in sorted(docset.root.rglob("*.html")):
        rel = path.relative_to(docset.root).as_posix()
        if rel in docset.faq_pages or rel in docset.skip_pages:
            continue
        if any(rel.startswith(d + "/") for d in docset.skip_dirs):
            continue
        pages.append(rel)
    return pages


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def _write_qrels(path: Path, pairs: Iterable[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t1" for q, d in pairs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_ooc(folder: Path, unrelated: Sequence[FaqEntry]) -> None:
    corpus = ({"_id": e.id, "title": e.question, "text": e.answer_text} for e in unrelated)
    _write_jsonl(folder / "corpus.jsonl", corpus)
    _write_jsonl(folder / "queries.jsonl", ({"_id": e.id, "text": e.question} for e in unrelated))
    _write_qrels(folder / "qrels" / "test.tsv", ((e.id, e.id) for e in unrelated))


def build_set(docset: DocSet, out: Path, unrelated: Sequence[FaqEntry], ooc_limit: int = 0) -> dict[str, Any]:
    # Imported here so that `score` runs without raggity's reader dependencies loaded.
    from raggity.documents.readers.html import read_html  # noqa: PLC0415

    target = out / docset.name
    if target.exists():
        shutil.rmtree(target)
    docs = target / "docs"
    corpus = []
    for rel in doc_pages(docset):
        dest = docs / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(docset.root / rel, dest)
        try:
            doc = read_html(docset.root / rel)
        except Exception:  # a page the reader refuses is left out of the corpus, as ingest would skip it
            continue
        title = doc.headings[0].title if doc.headings else rel
        corpus.append({"_id": rel, "title": title, "text": doc.text})
    for css in docset.root.rglob("*.css"):
        rel = css.relative_to(docset.root).as_posix()
        if not any(rel.startswith(d + "/") for d in docset.skip_dirs if d != "_static"):
            (docs / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(css, docs / rel)
    in_corpus = {row["_id"] for row in corpus}
    stems: Counter[str] = Counter()
    words: Counter[str] = Counter()
    for row in corpus:
        found = set(_WORD.findall(row["text"].lower()))
        words.update(found)
        stems.update({w[:5] for w in found if len(w) >= 5})
    common = frozenset(w for w, n in words.items() if n > len(corpus) / 2)
    questions: list[dict[str, Any]] = []
    unlinked: list[str] = []
    for entry in faq_entries(docset):
        gold = [link for link in entry.links if link in in_corpus]
        facts = key_facts(entry.spans, entry.answer_text, entry.question, lambda st: stems[st], common=common)
        if not gold or not facts:
            unlinked.append(entry.question)
            continue
        questions.append(
            {
                "_id": entry.id,
                "question": entry.question,
                "answers": list(facts),
                "impossible": False,
                "gold": gold,
                "para": gold[0],
                "key_facts": list(facts),
                "all_facts": list(
                    key_facts(
                        entry.spans,
                        entry.answer_text,
                        entry.question,
                        lambda st: stems[st],
                        limit=99,
                        common=common,
                    )
                ),
                "gold_text": entry.answer_text,
                "faq": f"{entry.page}#{entry.anchor}",
            }
        )
    beir = target / "beir"
    _write_jsonl(beir / "corpus.jsonl", corpus)
    _write_jsonl(beir / "queries.jsonl", ({"_id": q["_id"], "text": q["question"]} for q in questions))
    _write_qrels(beir / "qrels" / "test.tsv", ((q["_id"], g) for q in questions for g in q["gold"]))
    _write_jsonl(beir / "questions.jsonl", questions)
    _write_ooc(target / "ooc", unrelated)
    if ooc_limit:
        # A smaller out-of-corpus group for a short run (`--per-group` draws the same number from each
        # group): the first N that `rag eval --answers` may ask (not in the calibration split).
        usable = [e for e in unrelated if not in_calibration_split(e.id)]
        _write_ooc(target / f"ooc-{ooc_limit}", usable[:ooc_limit])
    return {
        "set": docset.name,
        "package": docset.package,
        "pages": len(corpus),
        "questions": len(questions),
        "left_out_no_link_or_fact": unlinked,
        "out_of_corpus": len(unrelated),
    }


def build(out: Path, names: Sequence[str], ooc_limit: int = 0) -> list[dict[str, Any]]:
    missing = [SETS[n].package for n in names if not SETS[n].root.is_dir()]
    if missing:
        sys.exit(f"error: {', '.join(missing)} not installed\nfix: apt-get install {' '.join(missing)}")
    entries = {n: faq_entries(SETS[n]) for n in SETS if SETS[n].root.is_dir()}
    summaries = []
    for name in names:
        # Out-of-corpus: every other set's FAQ questions (another product's FAQ is not answered here).
        unrelated = [e for other, found in entries.items() if other != name for e in found]
        summaries.append(build_set(SETS[name], out, unrelated, ooc_limit))
    return summaries


# --- scoring ---------------------------------------------------------------------------------------


def score(details: Path, set_dir: Path) -> dict[str, Any]:
    """Judges each answer of a `rag eval --answers --details` file by the key-facts rule."""
    questions = {}
    for line in (set_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            questions[q["_id"]] = q
    rows = []
    for line in details.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        q = questions.get(record["id"])
        facts = q["key_facts"] if q else []
        right, held = judge(record["answer"], record["declined"], facts) if q else (False, 0)
        partly = q is not None and partly_right(
            record["answer"], record["declined"], q.get("all_facts", facts)
        )
        rows.append(
            {
                **record,
                "key_facts": facts,
                "facts_held": held,
                "right": right if q else None,
                "partly": partly,
            }
        )
    answerable = [r for r in rows if r["group"] == "answerable"]
    ooc = [r for r in rows if r["group"] != "answerable"]
    return {
        "answerable": len(answerable),
        "right": sum(bool(r["right"]) for r in answerable),
        "partly_right": sum(bool(r["partly"]) for r in answerable),
        "refused": sum(r["declined"] for r in answerable),
        "out_of_corpus": len(ooc),
        "out_of_corpus_declined": sum(r["declined"] for r in ooc),
        "rows": rows,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, default=DEFAULT_OUT)
    b.add_argument("--sets", default=",".join(SETS))
    b.add_argument(
        "--ooc-limit", type=int, default=0, help="also write ooc-N/ with N out-of-corpus questions"
    )
    s = sub.add_parser("score")
    s.add_argument("details", type=Path)
    s.add_argument("--set", type=Path, required=True, dest="set_dir")
    s.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "build":
        names = [n.strip() for n in args.sets.split(",") if n.strip()]
        unknown = [n for n in names if n not in SETS]
        if unknown:
            sys.exit(f"error: unknown set {', '.join(unknown)}\nfix: choose from {', '.join(SETS)}")
        for summary in build(args.out, names, args.ooc_limit):
            print(json.dumps(summary, ensure_ascii=False))
        return
    result = score(args.details, args.set_dir)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return
    for r in result["rows"]:
        mark = "-" if r["right"] is None else ("RIGHT" if r["right"] else "wrong")
        held = f"{r['facts_held']}/{len(r['key_facts'])}"
        mark += "+partly" if r["partly"] and not r["right"] else ""
        print(f"{mark:12} {r['group'][:6]:6} declined={r['declined']!s:5} facts {held} {r['question'][:70]}")
    print(
        f"answerable right {result['right']}/{result['answerable']}"
        f" (partly right {result['partly_right']}), refused {result['refused']}/{result['answerable']},"
        f" out-of-corpus declined {result['out_of_corpus_declined']}/{result['out_of_corpus']}"
    )


if __name__ == "__main__":
    main()
