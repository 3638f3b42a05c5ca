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
import itertools
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from wrap100_prose import (
    PRAGMA,
    Comment,
    Refused,
    comments,
    docstrings,
    multiline_rows,
    rewrap_comments,
    rewrap_docstrings,
    tokens,
)
from wrap100_strings import split_strings

WIDTH = 100
ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kenning", "kenning_cli", "mcp_server", "web_ui", "feed_worker", "tests", "bench")
# format / fix rounds per step; each round only shortens lines, so it settles in one or two
ROUNDS = 4


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
