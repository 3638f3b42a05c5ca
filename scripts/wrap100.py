"""Wrap the Python tree at 100 columns, touching only the lines over 100.

    python scripts/wrap100.py            # rewrite the tree in place
    python scripts/wrap100.py --check    # say what would change, write nothing (exit 1 if anything)
    python scripts/wrap100.py PATH...    # only these files or folders

Every other line stays as it is written: the tree is not ruff-format-clean and does not need to be.
A line of code over 100 is cut where the code already lists things (after a comma inside brackets,
between two adjacent strings, before a ``for``/``if``/``else``/``and``/``or`` inside brackets), the
shallowest such place that fits first, and the rest continues under the bracket it is in, as the
tree is written. A line with no such cut, or with a pragma comment that must stay on its row, has
its statement (or compound statement's header) laid out by ``ruff format --range`` (the pinned
ruff, at 100) instead. Rows are taken bottom-up so the rows above stay valid. Neither splits a
string or a comment, so around them this script:

1. lifts a trailing comment onto its own line above the statement when keeping it trailing would
   make ruff split the statement (or leave the line over 100); pragmas (noqa, type:, ...) stay where
   they are;
2. splits a long string literal into implicitly concatenated parts at spaces (f-strings only outside
   their replacement fields), in parentheses unless it is a whole element of a bracketed list;
3. rewraps docstring paragraphs and comment paragraphs that have a line over 100; indented blocks,
   list items, doctests and pragmas keep their lines, and nothing is broken inside a word (URLs stay
   whole).

The pass is deterministic and idempotent: a second run changes nothing. It refuses to write a file
whose AST changed: the dump of the original must equal the result's once docstring whitespace is
collapsed (implicit concatenation is already joined by the parser). Then, on the files written,
ruff check --add-noqa puts back on the reported line a noqa that ruff format moved and marks a line
it cannot bring under 100 ``# noqa: E501`` (those are listed at the end); unused noqa are dropped.
ruff check's E501 (line-length 100 in pyproject.toml) keeps the tree there afterwards.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import io
import itertools
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

WIDTH = 100
ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kenning", "kenning_cli", "mcp_server", "web_ui", "feed_worker", "tests", "bench")
# format / fix rounds per step; each round only shortens lines, so it settles in one or two
ROUNDS = 4
PRAGMA = re.compile(r"\b(noqa|type:|pragma|nosec|fmt:|pyright:|mypy:|pylint:|isort:|ruff:)")
LIST_MARKER = re.compile(r"([-*+]|\d+[.)]) ")
VERBATIM_START = (">>>", "...", "..", "|", ":", "+-", "==")
RULE = re.compile(r"(\s*#.*?)([-=#*~_+])\2{7,}")
STRING = re.compile(r"([A-Za-z]*)('|\")(.*)\2", re.DOTALL)


class Refused(Exception):
    """The result would not mean what the original means; the file is left as it was."""


@dataclass
class Outcome:
    path: Path
    before: str
    after: str
    lifted: int = 0
    long_lines: list[tuple[int, str]] = field(default_factory=list)


# ---- ruff
# ------------------------------------------------------------------------------------------


def ruff_binary() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        sys.exit(
            "wrap100: no ruff next to this Python or on PATH; install the test extra (pip "
            "install -e '.[test]')"
        )
    return found


def ruff_format(text: str, path: Path, ruff: str, row: int) -> str:
    """The text with the statement (or compound header) that holds ``row`` laid out by ruff."""
    end = len(text.splitlines()[row - 1]) + 1
    done = subprocess.run(
        [ruff, "format", "--line-length", str(WIDTH), "--range", f"{row}:1-{row}:{end}",
         "--stdin-filename", str(path), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise Refused(f"ruff format failed: {done.stderr.strip()}")
    return done.stdout


def long_rows(text: str) -> list[int]:
    """Rows over the width that ruff could shorten: code, not a comment line, a docstring or the
    inside of a multi-line string (steps 1-3 handle those)."""
    lines = text.splitlines()
    if all(len(line) <= WIDTH for line in lines):
        return []
    skip = multiline_rows(text)
    for doc in docstrings(ast.parse(text)):
        assert doc.end_lineno is not None
        skip.update(range(doc.lineno, doc.end_lineno + 1))
    return [
        n
        for n, line in enumerate(lines, 1)
        if len(line) > WIDTH and n not in skip and not line.lstrip().startswith("#")
    ]


@dataclass(frozen=True)
class Cut:
    at: int  # the column the first part ends at
    resume: int  # the column the rest starts at
    bracket: tuple[int, int]  # (row, column) of the bracket the rest continues under
    depth: float  # brackets around the cut (+0.5 before a keyword): the shallowest is taken first


def row_tokens(text: str, row: int) -> list[tuple[tokenize.TokenInfo, int, tuple[int, int] | None]]:
    """The tokens on ``row``, each with the number of brackets open before it and the innermost."""
    stack: list[tuple[int, int]] = []
    out = []
    for tok in tokens(text):
        if tok.start[0] > row:
            break
        if tok.start[0] == row and tok.type not in (
            tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT
        ):
            out.append((tok, len(stack), stack[-1] if stack else None))
        if tok.type == tokenize.OP and tok.string in "([{":
            stack.append(tok.start)
        elif tok.type == tokenize.OP and tok.string in ")]}":
            stack.pop()
    return out


def cuts(row_toks: list[tuple[tokenize.TokenInfo, int, tuple[int, int] | None]]) -> list[Cut]:
    out = []
    targets: set[int] = set()  # depths between `for` and `in` or in a lambda's parameters
    for (tok, depth, _), (nxt, next_depth, bracket) in itertools.pairwise(row_toks):
        if tok.type == tokenize.NAME and tok.string in ("for", "lambda"):
            targets.add(depth)
        elif tok.string == "in" or (tok.type == tokenize.OP and tok.string == ":"):
            targets.discard(depth)
        if bracket is None or nxt.type == tokenize.COMMENT or depth in targets:
            continue
        listed = tok.string == "," and tok.type == tokenize.OP and nxt.string not in (")", "]", "}")
        if listed or (tok.type == nxt.type == tokenize.STRING and tok.start[0] == tok.end[0]):
            out.append(Cut(tok.end[1], nxt.start[1], bracket, next_depth))
        elif nxt.type == tokenize.NAME and nxt.string in ("for", "if", "else", "and", "or"):
            out.append(Cut(tok.end[1], nxt.start[1], bracket, next_depth + 0.5))
    return out


def cut_row(text: str, row: int) -> list[str] | None:
    """The row as lines of at most the width, each continuation under its bracket; None when no
    cut fits (or a pragma comment would move off the row it speaks for)."""
    line = text.splitlines()[row - 1]
    row_toks = row_tokens(text, row)
    if not row_toks or row_toks[0][0].start[0] != row_toks[-1][0].end[0]:
        return None  # a multi-line string: not a row of its own
    last = row_toks[-1][0]
    if last.type == tokenize.COMMENT and PRAGMA.search(last.string):
        return None
    options = cuts(row_toks)
    pieces: list[tuple[int, int, int]] = []  # (start column in the row, indent, end column)
    start, indent = 0, 0
    while indent + len(line) - start > WIDTH:
        fitting: list[tuple[float, int, Cut, int]] = []
        for cut in options:
            if cut.at <= start or indent + cut.at - start > WIDTH:
                continue
            brow, bcol = cut.bracket
            if brow != row:
                col = bcol + 1  # rows above are as they were
            else:  # the bracket's column in the piece it ended up in
                owner = [p for p in [*pieces, (start, indent, 0)] if p[0] <= bcol][-1]
                col = owner[1] + bcol - owner[0] + 1
            fitting.append((cut.depth, -cut.at, cut, col))
        if not fitting:
            return None
        _, _, cut, col = min(fitting, key=lambda f: (f[0], f[1]))
        if col > WIDTH - 20:
            return None
        pieces.append((start, indent, cut.at))
        start, indent = cut.resume, col
    if not pieces:
        return None
    pieces.append((start, indent, len(line)))
    head = [line[: pieces[0][2]].rstrip()]
    return head + [" " * i + line[a:b].rstrip() for a, i, b in pieces[1:]]


def format_long(text: str, path: Path, ruff: str) -> str:
    """Each long row cut (``cut_row``), or its statement laid out by ruff, from the bottom up: both
    change only the row or the statement around it, so every row above the first one changed is as
    it was (and the rows found long at the start still are)."""
    limit = len(text.splitlines()) + 1
    for row in reversed(long_rows(text)):
        if row >= limit:
            continue
        lines = text.splitlines()
        pieces = cut_row(text, row)
        new = "\n".join([*lines[: row - 1], *(pieces or []), *lines[row:]]) + "\n"
        if pieces is None or not parses(new):
            new = ruff_format(text, path, ruff, row)
        old_lines, new_lines = text.splitlines(), new.splitlines()
        first = next(
            (n for n, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), 1) if a != b),
            min(len(old_lines), len(new_lines)) + 1,
        )
        limit = min(row, first)
        text = new
    return text


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def changed_rows(before: str, after: str) -> set[int]:
    """Rows of ``after`` that are not lines of ``before`` left as they were."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    out: set[int] = set()
    for tag, _, _, first, last in matcher.get_opcodes():
        if tag != "equal":
            out.update(range(first + 1, last + 1))
    return out


# ---- tokens
# ----------------------------------------------------------------------------------------


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


def lifts(source: str, formatted: str) -> list[tuple[int, Comment]]:
    """(row to insert above, comment) for each trailing comment that should stand on its own
    line."""
    before, after = comments(source), comments(formatted)
    if [c.text for c in before] != [c.text for c in after]:
        return []  # ruff moved comments around: nothing can be mapped safely, leave them
    touched = changed_rows(source, formatted)
    inside_strings = multiline_rows(source)
    lines = source.splitlines()
    out = []
    for old, new in zip(before, after, strict=True):
        if not old.trailing or PRAGMA.search(old.text):
            continue
        line = formatted.splitlines()[new.row - 1]
        if old.first == old.last:
            if new.first == new.last and len(line) <= WIDTH:
                continue
            out.append((old.first, old))
        elif len(line) > WIDTH:
            row = old.row
            if row in inside_strings or lines[row - 2].rstrip().endswith("\\"):
                row = old.first
            out.append((row, old))
        elif (
            new.row == new.last != new.first
            and new.row in touched
            and line.lstrip()[:1] in (")", "]", "}")
        ):
            out.append((old.first, old))
    return out


def lift(source: str, moves: list[tuple[int, Comment]]) -> str:
    lines = source.splitlines()
    for _, comment in moves:
        lines[comment.row - 1] = lines[comment.row - 1][: comment.col].rstrip()
    for row in sorted({row for row, _ in moves}, reverse=True):
        indent = re.match(r"\s*", lines[row - 1])
        prefix = indent.group() if indent else ""
        lines[row - 1 : row - 1] = [prefix + c.text for r, c in moves if r == row]
    return "\n".join(lines) + "\n"


# ---- 2. long string literals --------------------------------------------------------------------


def split_points(body: str, fstring: bool, raw: bool) -> tuple[list[int], list[tuple[int, int]]]:
    """Indices after a space where the body may be cut, and the spans of f-string replacement
    fields."""
    points: list[int] = []
    fields: list[tuple[int, int]] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and not raw:
            if body.startswith("\\N{", i):
                i = body.index("}", i) + 1
            else:
                i += 2
            continue
        if fstring and body.startswith(("{{", "}}"), i):
            i += 2
            continue
        if fstring and ch == "{":
            end = field_end(body, i)
            fields.append((i, end))
            i = end
            if i < len(body):
                points.append(i)  # between a field and what follows: no space needed
            continue
        i += 1
        if ch == " " and i < len(body):
            points.append(i)
    return points, fields


def field_end(body: str, start: int) -> int:
    """The index after the ``}`` closing the replacement field that opens at ``start``."""
    depth, i, quote = 0, start, ""
    while i < len(body):
        ch = body[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise Refused(f"unbalanced f-string field in {body!r}")


def split_string(text: str, budget: int) -> list[str] | None:
    match = STRING.fullmatch(text)
    if match is None or text.endswith(('"""', "'''")) or budget < 30:
        return None
    prefix, quote, body = match.groups()
    fstring, raw = "f" in prefix.lower(), "r" in prefix.lower()
    points, fields = split_points(body, fstring, raw)
    cuts, start = [], 0
    room = budget - len(prefix) - 2
    while len(body) - start > room:
        fitting = [p for p in points if start < p <= start + room]
        later = [p for p in points if p > start]
        if not fitting and not later:
            break
        start = fitting[-1] if fitting else later[0]
        cuts.append(start)
    while cuts and len(body) - cuts[-1] < WIDTH // 4:  # no lone word on the last line
        earlier = [p for p in points if (cuts[-2] if len(cuts) > 1 else 0) < p < cuts[-1]]
        if not earlier or len(body) - earlier[-1] > room:
            break
        cuts[-1] = earlier[-1]
    if not cuts:
        return None
    bounds = [0, *cuts, len(body)]
    parts = []
    for a, b in itertools.pairwise(bounds):
        piece, piece_prefix = body[a:b], prefix
        if fstring and not any(a <= s < b for s, _ in fields):
            piece = piece.replace("{{", "{").replace("}}", "}")
            piece_prefix = prefix.replace("f", "").replace("F", "")
        parts.append(f"{piece_prefix}{quote}{piece}{quote}")
    return parts


def split_strings(text: str, touched: set[int]) -> str:
    """Split the long parts of each run of adjacent string literals; parenthesize the run unless it
    is a whole element of a bracketed list already (a run over several lines only on ``touched``
    rows, the ones this pass rewrote)."""
    lines = text.splitlines()
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    docs = {(d.lineno, d.col_offset) for d in docstrings(ast.parse(text))}
    significant = [t for t in tokens(text) if t.type not in (tokenize.NL, tokenize.COMMENT)]
    edits: list[tuple[int, int, str]] = []
    n = 0
    while n < len(significant):
        if significant[n].type != tokenize.STRING:
            n += 1
            continue
        run = [significant[n]]
        while significant[n + len(run)].type == tokenize.STRING:
            run.append(significant[n + len(run)])
        before, after = significant[n - 1], significant[n + len(run)]
        n += len(run)
        element = before.string in ("(", "[", "{", ",") and after.string in (")", "]", "}", ",")
        start = offsets[run[0].start[0] - 1] + run[0].start[1]
        end = offsets[run[-1].end[0] - 1] + run[-1].end[1]
        new, long = split_run(run, lines, docs)
        start_row = run[0].start[0]
        hanging = len(run) > 1 and run[-1].end[0] > start_row and start_row in touched
        if new is None and not element and (long or hanging):
            # on a line of its own in parentheses it fits; a run over several lines hanging after
            # `=` or `:` reads as one value
            new = text[start:end]
        if new is None:
            continue
        edits.append((start, end, new if element else f"({new})"))
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    return text


def split_run(
    run: list[tokenize.TokenInfo], lines: list[str], docs: set[tuple[int, int]]
) -> tuple[str | None, bool]:
    """The run's source with the parts that end past the width joined with their neighbours of
    the same kind and split afresh (None if nothing could be), and whether a
    part ends past the width."""
    row, col = run[0].start
    line = lines[row - 1]
    indent = col if not line[:col].strip() else len(line) - len(line.lstrip()) + 4
    long = [
        tok.end[0] == tok.start[0]
        and tok.start not in docs
        and len(lines[tok.start[0] - 1]) > WIDTH
        and tok.end[1] > WIDTH - 3
        for tok in run
    ]
    if not any(long):
        return None, False
    groups = [[0]]
    for k in range(1, len(run)):
        between = gap(lines, run[k - 1].end, run[k].start)
        if "#" not in between and mergeable(run[k - 1], run[k]):
            groups[-1].append(k)
        else:
            groups.append([k])
    pieces: list[str] = []
    split = False
    for g, members in enumerate(groups):
        if g:
            pieces.append(gap(lines, run[groups[g - 1][-1]].end, run[members[0]].start))
        if not any(long[k] for k in members):
            pieces.append(gap(lines, run[members[0]].start, run[members[-1]].end))
            continue
        merged = merge([run[k].string for k in members])
        parts = split_string(merged, WIDTH - indent - 2)
        split = split or parts is not None or len(members) > 1
        pieces.append(" ".join(parts or [merged]))
    return ("".join(pieces) if split else None), True


def mergeable(a: tokenize.TokenInfo, b: tokenize.TokenInfo) -> bool:
    """Whether two adjacent literals can be one: same prefix and quote, each on one line."""
    first, second = STRING.fullmatch(a.string), STRING.fullmatch(b.string)
    if first is None or second is None or a.start[0] != a.end[0] or b.start[0] != b.end[0]:
        return False
    if a.string.endswith(('"""', "'''")) or b.string.endswith(('"""', "'''")):
        return False
    same_prefix = sorted(first.group(1).lower()) == sorted(second.group(1).lower())
    return same_prefix and first.group(2) == second.group(2)


def merge(literals: list[str]) -> str:
    matches = [STRING.fullmatch(s) for s in literals]
    bodies = "".join(m.group(3) for m in matches if m is not None)
    head = matches[0]
    assert head is not None
    return f"{head.group(1)}{head.group(2)}{bodies}{head.group(2)}"


def gap(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The source between two token positions (whitespace, line breaks, comments) as it is."""
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1] : end[1]]
    middle = lines[start[0] : end[0] - 1]
    return "\n".join([lines[start[0] - 1][start[1] :], *middle, lines[end[0] - 1][: end[1]]])


# ---- 3. paragraphs: docstrings and comment blocks ------------------------------------------------


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


# ---- the check and the pass
# ------------------------------------------------------------------------


def meaning(text: str) -> str:
    tree = ast.parse(text)
    for doc in docstrings(tree):
        assert isinstance(doc.value, str)
        doc.value = " ".join(doc.value.split())
    return ast.dump(tree)


def wrap(path: Path, ruff: str) -> Outcome:
    original = path.read_text()
    text, lifted = original, set[str]()
    formatted = format_long(text, path, ruff)
    for _ in range(ROUNDS):
        moves = lifts(text, formatted)
        if not moves:
            break
        lifted.update(c.text for _, c in moves)
        text = lift(text, moves)
        formatted = format_long(text, path, ruff)
    text = formatted
    for _ in range(ROUNDS):
        split = split_strings(text, changed_rows(original, text))
        if split == text:
            break
        text = format_long(split, path, ruff)
    text = rewrap_docstrings(text)
    text = rewrap_comments(text, lifted)
    text = format_long(text, path, ruff)
    if meaning(original) != meaning(text):
        raise Refused("the AST changed")
    outcome = Outcome(path, original, text, lifted=len(lifted))
    outcome.long_lines = [
        (n, line) for n, line in enumerate(text.splitlines(), 1) if len(line) > WIDTH
    ]
    return outcome


def settle_noqa(paths: list[Path], originals: list[str], ruff: str) -> None:
    """Put each noqa on the line ruff reports on now that ruff format moved lines (a signature's
    ``# noqa: F811`` lands on its ``) -> None:``), drop the ones left unused, and mark what is still
    over the width ``# noqa: E501`` (ruff puts a multi-line string's at its end)."""
    codes = {"E501"}
    for text in originals:
        for match in re.finditer(r"#\s*noqa:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)", text):
            codes.update(code.strip() for code in match.group(1).split(","))
    names = [str(p) for p in paths]
    width = ["--line-length", str(WIDTH)]
    for _ in range(ROUNDS):  # a comment added can make ruff split the statement it is in
        before = [p.read_text() for p in paths]
        for command in (
            ["check", *width, "--select", ",".join(sorted(codes)), "--add-noqa"],
            ["check", *width, "--fix-only", "--fixable", "RUF100"],
        ):
            subprocess.run([ruff, *command, *names], check=False, capture_output=True)
        for path in paths:
            text = path.read_text()
            formatted = format_long(text, path, ruff)
            if formatted != text:
                path.write_text(formatted)
        if [p.read_text() for p in paths] == before:
            break


def python_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for name in paths:
        p = Path(name)
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "paths", nargs="*", help=f"files or folders (default: {' '.join(PACKAGES)})"
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file would change"
    )
    args = parser.parse_args()
    ruff = ruff_binary()
    files = python_files(args.paths or [str(ROOT / p) for p in PACKAGES])
    changed, refused, lines_before, lines_after, lifted = 0, 0, 0, 0, 0
    long_lines: list[str] = []
    written: list[Path] = []
    originals: list[str] = []
    for path in files:
        try:
            outcome = wrap(path, ruff)
        except (Refused, SyntaxError, tokenize.TokenError) as e:
            refused += 1
            print(f"{path}: refused, left as it was: {e}", file=sys.stderr)
            continue
        lines_before += outcome.before.count("\n")
        lines_after += outcome.after.count("\n")
        lifted += outcome.lifted
        long_lines += [f"{path}:{n}: {line.strip()}" for n, line in outcome.long_lines]
        if outcome.after != outcome.before:
            changed += 1
            if args.check:
                print(f"{path}: would change")
            else:
                path.write_text(outcome.after)
                written.append(path)
                originals.append(outcome.before)
    if written:
        settle_noqa(written, originals, ruff)
    verb = "would change" if args.check else "changed"
    print(
        f"{len(files)} files, {changed} {verb}, {refused} refused; lines {lines_before} -> "
        f"{lines_after}; "
        f"{lifted} trailing comments lifted; {len(long_lines)} lines still over {WIDTH}"
    )
    for line in long_lines:
        print(f"  {line}")
    return 1 if refused or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
