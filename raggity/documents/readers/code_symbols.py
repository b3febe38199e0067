"""Function and class boundaries of source code, found with tree-sitter, as headings for the chunker.

Each definition becomes a Heading at the start of its first line (doc comments and decorators right
above it included) whose level is its nesting depth and whose title names it (`class Foo`, `def bar`),
so that a chunk's heading trail reads `class Foo > def bar`. Where a definition ends and its enclosing
scope goes on, a Heading with an empty title closes it. Only classes, modules, namespaces, traits and
impl blocks are looked into: a function's inner helpers stay part of the function.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from raggity.core.types import Heading

# Deeper class-in-class nesting than this is read as part of the enclosing definition.
_MAX_DEPTH = 6
# Definitions inside more nested #if blocks than this are not looked for.
_MAX_BLOCKS = 32


@dataclass(frozen=True)
class Grammar:
    """How to find definitions in one language's syntax tree."""

    module: str  # the grammar's Python package
    function: str  # its function returning the language
    labels: dict[str, str]  # definition node type -> the word its title starts with
    containers: frozenset[str] = frozenset()  # definitions whose body holds more definitions
    wrappers: frozenset[str] = frozenset()  # decorators, exports, templates: the definition is inside
    transparent: frozenset[str] = frozenset()  # blocks (#ifdef, extern "C") that hold top-level code


_PYTHON = Grammar(
    "tree_sitter_python",
    "language",
    {"function_definition": "def", "class_definition": "class"},
    containers=frozenset({"class_definition"}),
    wrappers=frozenset({"decorated_definition"}),
)
_JS_LABELS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "lexical_declaration": "function",  # only `const f = () => ...`, see _is_definition
    "variable_declaration": "function",
}
_TS_LABELS = {
    **_JS_LABELS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
}
_JS_CONTAINERS = frozenset({"class_declaration", "abstract_class_declaration", "internal_module"})
_JS_WRAPPERS = frozenset({"export_statement", "expression_statement"})
_C_LABELS = {"function_definition": "function", "struct_specifier": "struct", "union_specifier": "union"}
_C_TRANSPARENT = frozenset(
    {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "linkage_specification"}
)

GRAMMARS: dict[str, Grammar] = {
    ".py": _PYTHON,
    **dict.fromkeys(
        (".js", ".jsx", ".mjs", ".cjs"),
        Grammar("tree_sitter_javascript", "language", _JS_LABELS, _JS_CONTAINERS, _JS_WRAPPERS),
    ),
    ".ts": Grammar("tree_sitter_typescript", "language_typescript", _TS_LABELS, _JS_CONTAINERS, _JS_WRAPPERS),
    ".tsx": Grammar("tree_sitter_typescript", "language_tsx", _TS_LABELS, _JS_CONTAINERS, _JS_WRAPPERS),
    ".go": Grammar(
        "tree_sitter_go",
        "language",
        {"function_declaration": "func", "method_declaration": "func", "type_declaration": "type"},
    ),
    ".rs": Grammar(
        "tree_sitter_rust",
        "language",
        {
            "function_item": "fn",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "mod",
            "macro_definition": "macro_rules!",
        },
        containers=frozenset({"impl_item", "trait_item", "mod_item"}),
    ),
    ".java": Grammar(
        "tree_sitter_java",
        "language",
        {
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "record",
            "annotation_type_declaration": "@interface",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
        },
        containers=frozenset(
            {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
        ),
    ),
    **dict.fromkeys(
        (".c", ".h"),
        Grammar("tree_sitter_c", "language", _C_LABELS, transparent=_C_TRANSPARENT),
    ),
    **dict.fromkeys(
        (".cpp", ".hpp", ".cc", ".cxx", ".hh", ".hxx"),
        Grammar(
            "tree_sitter_cpp",
            "language",
            {**_C_LABELS, "class_specifier": "class", "namespace_definition": "namespace"},
            containers=frozenset({"class_specifier", "struct_specifier", "namespace_definition"}),
            wrappers=frozenset({"template_declaration"}),
            transparent=_C_TRANSPARENT,
        ),
    ),
}

# Where each container keeps its members, when not in the `body` field.
_BODY_TYPES = frozenset(
    {"block", "class_body", "declaration_list", "field_declaration_list", "statement_block", "interface_body"}
    | {"enum_body", "enum_body_declarations"}
)
_WORD = re.compile(r"\w")
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})


def definition_headings(text: str, grammar: Grammar) -> tuple[Heading, ...]:
    """Headings for the definitions of `text`; empty when the parser finds none or cannot parse it."""
    parser = _parser(grammar.module, grammar.function)
    tree = parser.parse(text.encode("utf-8", "surrogatepass"))
    line_starts = _line_starts(text)
    headings: list[Heading] = []
    for node, depth, title in _definitions(tree.root_node, grammar, 1):
        first_row = _first_row(node)
        end = node.end_point
        end_row = end.row if end.column == 0 else end.row + 1
        start = line_starts[first_row] if first_row < len(line_starts) else len(text)
        stop = line_starts[end_row] if end_row < len(line_starts) else len(text)
        headings.append(Heading(offset=start, level=depth, title=title))
        headings.append(Heading(offset=stop, level=depth, title=""))
    # Stable: the closing heading of a definition stays before one that opens at the same offset.
    ordered = sorted(headings, key=lambda heading: heading.offset)
    return tuple(_without_empty_closings(ordered, text))


def _without_empty_closings(headings: list[Heading], text: str) -> Iterator[Heading]:
    """Drops a closing heading followed by nothing but punctuation (a class's final `}`): such text
    stays with the definition before it rather than becoming a chunk of its own."""
    for k, heading in enumerate(headings):
        if not heading.title:
            following = headings[k + 1].offset if k + 1 < len(headings) else len(text)
            if not _WORD.search(text, heading.offset, following):
                continue
        yield heading


def _definitions(node: Any, grammar: Grammar, depth: int, blocks: int = 0) -> Iterator[tuple[Any, int, str]]:
    """(outer node, depth, title) of each definition under `node`, nested ones after their parent."""
    for child in node.named_children:
        if child.type in grammar.transparent:
            # Bounded: a file of ten thousand nested #ifdefs must not exhaust the Python stack.
            if blocks < _MAX_BLOCKS:
                yield from _definitions(child, grammar, depth, blocks + 1)
            continue
        inner = _unwrapped(child, grammar)
        if inner is None or not _is_definition(inner, grammar):
            continue
        yield child, depth, _title(inner, grammar.labels[inner.type])
        if inner.type in grammar.containers and depth < _MAX_DEPTH:
            body = inner.child_by_field_name("body") or _body_child(inner)
            if body is not None:
                yield from _definitions(body, grammar, depth + 1, blocks)


def _unwrapped(node: Any, grammar: Grammar) -> Any | None:
    while node is not None and node.type in grammar.wrappers:
        inner = node.child_by_field_name("definition") or node.child_by_field_name("declaration")
        if inner is None:
            # `export default class {}`, `template <...> ...`, `namespace N {}` as an expression.
            named = [c for c in node.named_children if c.type in grammar.labels or c.type in grammar.wrappers]
            inner = named[-1] if named else None
        node = inner
    return node


def _is_definition(node: Any, grammar: Grammar) -> bool:
    if node.type not in grammar.labels:
        return False
    if node.type in ("lexical_declaration", "variable_declaration"):
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        value = declarators[0].child_by_field_name("value") if len(declarators) == 1 else None
        return value is not None and value.type in _FUNCTION_VALUES
    if node.type in ("struct_specifier", "union_specifier", "class_specifier"):
        # `struct S s;` names a type; only a body defines one.
        return node.child_by_field_name("body") is not None
    return True


def _title(node: Any, label: str) -> str:
    name = _name(node)
    if node.type == "method_declaration" and node.child_by_field_name("receiver") is not None:
        return f"{label} {_text(node.child_by_field_name('receiver'))} {name}".strip()  # Go: func (s *T) Name
    if (
        node.type == "function_definition"
        and label == "def"
        and node.children
        and node.children[0].type == "async"
    ):
        label = "async def"
    return f"{label} {name}".strip()


def _name(node: Any) -> str:
    if node.type == "impl_item":
        trait, kind = node.child_by_field_name("trait"), node.child_by_field_name("type")
        return f"{_text(trait)} for {_text(kind)}" if trait is not None else _text(kind)
    if node.type in ("lexical_declaration", "variable_declaration"):
        declarator = next(c for c in node.named_children if c.type == "variable_declarator")
        return _text(declarator.child_by_field_name("name"))
    if node.type == "type_declaration":
        spec = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
        return _text(spec.child_by_field_name("name")) if spec is not None else ""
    name = node.child_by_field_name("name")
    if name is not None:
        return _text(name)
    declarator = node.child_by_field_name("declarator")
    # C and C++: int *(*f)(void) nests the name inside pointer and function declarators.
    while declarator is not None and declarator.child_by_field_name("declarator") is not None:
        declarator = declarator.child_by_field_name("declarator")
    return _text(declarator)


def _text(node: Any | None) -> str:
    if node is None or node.text is None:
        return ""
    return " ".join(node.text.decode("utf-8", "replace").split())


def _body_child(node: Any) -> Any | None:
    return next((c for c in node.named_children if c.type in _BODY_TYPES), None)


def _first_row(node: Any) -> int:
    """The row a definition starts at, moved up over the comments directly above it."""
    row: int = node.start_point.row
    previous = node.prev_named_sibling
    while previous is not None and "comment" in previous.type and previous.end_point.row >= row - 1:
        row = previous.start_point.row
        previous = previous.prev_named_sibling
    return row


def _line_starts(text: str) -> list[int]:
    starts = [0]
    position = text.find("\n")
    while position >= 0:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


@cache
def _parser(module: str, function: str) -> Any:
    # Imported on first use, one grammar at a time: a folder of Markdown never loads any.
    import tree_sitter  # noqa: PLC0415 - a grammar loads only for its language

    language = tree_sitter.Language(getattr(importlib.import_module(module), function)())
    return tree_sitter.Parser(language)


__all__ = ["GRAMMARS", "Grammar", "definition_headings"]
