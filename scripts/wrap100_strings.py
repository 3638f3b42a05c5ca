"""Long string literals of the wrap pass (scripts/wrap100.py): split at spaces into implicitly
concatenated parts, f-strings only outside their replacement fields."""

from __future__ import annotations

import ast
import itertools
import tokenize

from wrap100_prose import STRING, WIDTH, Refused, docstrings, tokens

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


