"""Prose of the wrap pass (scripts/wrap100.py): tokens and comments of a source, its docstrings,
and the rewrap of docstring and comment paragraphs that have a line over 100."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

WIDTH = 100
PRAGMA = re.compile(r"\b(noqa|type:|pragma|nosec|fmt:|pyright:|mypy:|pylint:|isort:|ruff:)")
LIST_MARKER = re.compile(r"([-*+]|\d+[.)]) ")
VERBATIM_START = (">>>", "...", "..", "|", ":", "+-", "==")
RULE = re.compile(r"(\s*#.*?)([-=#*~_+])\2{7,}")
STRING = re.compile(r"([A-Za-z]*)('|\")(.*)\2", re.DOTALL)


class Refused(Exception):
    """The result would not mean what the original means; the file is left as it was."""


@dataclass(frozen=True)
class Comment:
    row: int
    col: int
    text: str
    trailing: bool
    first: int  # the statement's first and last rows (a standalone comment: its own row)
    last: int


def tokens(text: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def comments(text: str) -> list[Comment]:
    lines = text.splitlines()
    found: list[tuple[int, int, str, bool]] = []
    spans: list[tuple[int, int]] = []
    first = 0
    for tok in tokens(text):
        if tok.type == tokenize.COMMENT:
            trailing = bool(lines[tok.start[0] - 1][: tok.start[1]].strip())
            found.append((tok.start[0], tok.start[1], tok.string, trailing))
        elif tok.type in (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
            continue
        elif tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if first:
                spans.append((first, tok.start[0]))
            first = 0
        elif not first:
            first = tok.start[0]
    out = []
    for row, col, string, trailing in found:
        span = (
            next(((a, b) for a, b in spans if a <= row <= b), (row, row))
            if trailing
            else (row, row)
        )
        out.append(Comment(row, col, string, trailing, *span))
    return out


def multiline_rows(text: str) -> set[int]:
    """Rows that begin inside a token started on an earlier row (a multi-line string)."""
    rows: set[int] = set()
    for tok in tokens(text):
        rows.update(range(tok.start[0] + 1, tok.end[0] + 1))
    return rows


def docstrings(tree: ast.AST) -> list[ast.Constant]:
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
        ):
            head = node.body[0]
            if (
                isinstance(head, ast.Expr)
                and isinstance(head.value, ast.Constant)
                and isinstance(head.value.value, str)
            ):
                out.append(head.value)
    return out


# ---- 1. trailing comments that make ruff split a statement
# ------------------------------------------



@dataclass
class Unit:
    """Lines of one paragraph (reflowable) or one verbatim line."""

    rows: list[int]
    words: list[str]
    first_prefix: str  # what precedes the words on the first line / on later lines
    next_prefix: str
    reflow: bool


def fill(unit: Unit, suffix: str) -> list[str]:
    """The words filled greedily to the width; a last line under a quarter of the width takes words
    from the one before it (no lone word left under a full line)."""
    rows: list[list[str]] = [[]]

    def render(n: int, words: list[str]) -> str:
        last = n == len(rows) - 1
        return (
            (unit.next_prefix if n else unit.first_prefix)
            + " ".join(words)
            + (suffix if last else "")
        )

    for word in unit.words:
        if rows[-1] and len(render(len(rows) - 1, [*rows[-1], word])) > WIDTH:
            rows.append([])
        rows[-1].append(word)
    while len(rows) > 1 and len(rows[-2]) > 1 and len(" ".join(rows[-1])) < WIDTH // 4:
        shorter, longer = rows[-2][:-1], [rows[-2][-1], *rows[-1]]
        if len(render(len(rows) - 1, longer)) > len(render(len(rows) - 2, shorter)):
            break
        rows[-2:] = [shorter, longer]
    return [render(n, words) for n, words in enumerate(rows)]


def docstring_units(lines: list[str], col: int, opening: str) -> list[Unit] | None:
    units: list[Unit] = []
    base = " " * col
    for n, line in enumerate(lines):
        text = line.strip()
        indent = len(line) - len(line.lstrip()) if n else col
        head = opening if n == 0 else base
        current = units[-1] if units else None
        marker = LIST_MARKER.match(text)
        if (
            not text
            or text.startswith(VERBATIM_START)
            or text.endswith("::")
            or (n and indent < col)
            or RULE.fullmatch("#" + text)
        ):
            units.append(Unit([n], [], "", "", reflow=False))
        elif indent == col and marker:
            hang = " " * len(marker.group())
            units.append(Unit([n], text.split(), head, base + hang, reflow=True))
        elif (
            current is not None
            and current.reflow
            and current.rows[-1] == n - 1
            and indent == len(current.next_prefix)
        ):
            current.rows.append(n)
            current.words.extend(text.split())
        elif indent == col:
            units.append(Unit([n], text.split(), head, base, reflow=True))
        else:
            units.append(Unit([n], [], "", "", reflow=False))
    return units


def rewrap_docstring(source: str, col: int) -> str | None:
    match = re.fullmatch(r"([A-Za-z]*)(\"\"\"|''')(.*)\2", source, re.DOTALL)
    if match is None or "\\\n" in source:
        return None
    prefix, quote, body = match.groups()
    lines = body.split("\n")
    opening = " " * col + prefix + quote
    physical = [opening + lines[0], *lines[1:]]
    physical[-1] += quote
    units = docstring_units(lines, col, opening)
    if units is None:
        return None
    out: list[str] = []
    changed = False
    for unit in units:
        longest = max(len(physical[r]) for r in unit.rows)
        if not unit.reflow or longest <= WIDTH:
            out.extend(physical[r] for r in unit.rows)
            continue
        changed = True
        last = unit.rows[-1] == len(lines) - 1
        out.extend(fill(unit, quote if last else ""))
    if not changed:
        return None
    if not out[-1].endswith(quote):
        return None
    return "\n".join(out)[col:]


def rewrap_docstrings(text: str) -> str:
    lines = text.splitlines()
    if all(len(line) <= WIDTH for line in lines):
        return text
    edits = []
    for doc in docstrings(ast.parse(text)):
        assert doc.end_lineno is not None
        assert doc.end_col_offset is not None
        if all(len(lines[r - 1]) <= WIDTH for r in range(doc.lineno, doc.end_lineno + 1)):
            continue
        # offsets count bytes
        tail = lines[doc.end_lineno - 1].encode()[doc.end_col_offset :].decode()
        source = "\n".join(lines[doc.lineno - 1 : doc.end_lineno])[doc.col_offset :]
        new = rewrap_docstring(source[: len(source) - len(tail)], doc.col_offset)
        if new is not None:
            edits.append(
                (doc.lineno, doc.end_lineno, lines[doc.lineno - 1][: doc.col_offset] + new + tail)
            )
    for first, last, new in sorted(edits, reverse=True):
        lines[first - 1 : last] = new.split("\n")
    return "\n".join(lines) + "\n"


def comment_units(block: list[tuple[int, str]], col: int, lifted: set[str]) -> list[Unit]:
    units: list[Unit] = []
    base = " " * col + "# "
    for row, text in block:
        content = text[2:]
        current = units[-1] if units else None
        hang = len(content) - len(content.lstrip(" "))
        marker = LIST_MARKER.match(content)
        if (
            not text.startswith("# ")
            or not content.strip()
            or PRAGMA.search(content)
            or content.startswith(VERBATIM_START)
            or RULE.fullmatch(text)
        ):
            units.append(Unit([row], [], base, base, reflow=False))
        elif text in lifted:
            units.append(Unit([row], content.split(), base, base, reflow=True))
        elif marker:
            units.append(
                Unit([row], content.split(), base, base + " " * len(marker.group()), reflow=True)
            )
        elif (
            current is not None
            and current.reflow
            and len(base) + hang == len(current.next_prefix)
            and (hang or current.next_prefix == base)
        ):
            current.rows.append(row)
            current.words.extend(content.split())
        elif hang:
            units.append(Unit([row], [], base, base, reflow=False))
        else:
            units.append(Unit([row], content.split(), base, base, reflow=True))
    return units


def rewrap_comments(text: str, lifted: set[str]) -> str:
    lines = text.splitlines()
    if all(len(line) <= WIDTH for line in lines):
        return text
    standalone = [c for c in comments(text) if not c.trailing]
    for c in standalone:  # a section rule (`# --- title -----`) is shortened, not wrapped
        rule = RULE.fullmatch(lines[c.row - 1])
        if rule and len(lines[c.row - 1]) > WIDTH and len(rule.group(1)) + 3 <= WIDTH:
            lines[c.row - 1] = lines[c.row - 1][:WIDTH]
    blocks: list[list[Comment]] = []
    for c in standalone:
        if blocks and blocks[-1][-1].row == c.row - 1 and blocks[-1][-1].col == c.col:
            blocks[-1].append(c)
        else:
            blocks.append([c])
    for block in reversed(blocks):
        if all(len(lines[c.row - 1]) <= WIDTH for c in block):
            continue
        col = block[0].col
        out: list[str] = []
        for unit in comment_units([(c.row, c.text) for c in block], col, lifted):
            if not unit.reflow or all(len(lines[r - 1]) <= WIDTH for r in unit.rows):
                out.extend(lines[r - 1] for r in unit.rows)
            else:
                out.extend(fill(unit, ""))
        lines[block[0].row - 1 : block[-1].row] = out
    return "\n".join(lines) + "\n"
