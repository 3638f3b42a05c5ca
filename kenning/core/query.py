"""Query building for the FT.* subset both search engines serve (docs/valkey-search.md). Pure.

Every value that reaches a query string goes through ``escape``; there is no other path. Each form
the engines disagree on is decided here, once: the match-all (``MATCH_ALL``), TEXT alternatives
(``text_any``), which characters a TAG value may hold (``tag_value``) and KNN order (``Search.args``
never sorts on the distance alias; the store orders KNN rows from the returned distance).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from kenning.core.errors import InvalidInput
from kenning.core.schema import DISTANCE_ALIAS, NAMESPACES, VECTOR_FIELD

T = TypeVar("T")

_SAFE = re.compile(r"[A-Za-z0-9_]")
# a value with nothing to escape (most tag values): returned as it is
_PLAIN = re.compile(r"[A-Za-z0-9_]+")
_FIELD = re.compile(r"^[a-z_]{1,32}$")
# The characters a TAG filter value may hold: the union of the project and tag allowlists
# (kenning/core/validation.py) plus the upper case of stored enum values. Both engines read these
# literally once escaped; anything else (``*`` stays a wildcard on valkey-search even escaped,
# ``?``, quotes, braces, spaces, non-ASCII) is refused before a query is built,
# never escaped and hoped for.
_TAG_VALUE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:/+#-]{0,99}$")
# Every document the index holds: a bare ``*`` without KNN is a syntax error on valkey-search 1.2.1
# (inside a KNN clause ``(*)`` works on both). The negation of an empty range matches every indexed
# document on both engines, also one whose hash lost ``created_at`` (a phantom the sweep must
# count); ``@created_at:[-inf +inf]`` would silently skip it. Measured on both:
# tests/kenning/test_engines.py.
MATCH_ALL = "-@created_at:[-inf -inf]"


def escape(value: str) -> str:
    """Backslash-escape every character that is not an ASCII letter, digit or underscore.

    Escaped punctuation is read literally by both engines inside TAG braces and TEXT terms, so a
    value can never close a clause, open an alternative or name another field.
    """
    if not value:
        raise InvalidInput("empty value in a query filter", hint="give a non-empty value")
    if any(ch in value for ch in "\x00\r\n"):
        raise InvalidInput("control characters are not allowed in filter values")
    if _PLAIN.fullmatch(value):
        return value
    return "".join(ch if _SAFE.match(ch) else "\\" + ch for ch in value)


def _field(name: str) -> str:
    if not _FIELD.match(name):
        raise InvalidInput(f"bad field name {name!r}")
    return name


def tag_value(value: str) -> str:
    """A TAG filter value, escaped; refused unless every character is one
    both engines read literally."""
    if not isinstance(value, str) or not _TAG_VALUE.match(value):
        raise InvalidInput(
            f"tag filter value {value!r} is not allowed",
            hint=(
                "1-100 characters: letters, digits and . _ : / + # -, starting with a "
                "letter, digit or '_' (e.g. 'ci/cd', 'my-proj.v2')"
            ),
        )
    return escape(value)


def tag(field_name: str, values: list[str] | tuple[str, ...]) -> str:
    """``@field:{a|b}`` matching any of the values."""
    if not values:
        raise InvalidInput(f"no values given for {field_name}")
    return "@" + _field(field_name) + ":{" + "|".join(tag_value(v) for v in values) + "}"


def not_tag(field_name: str, values: list[str] | tuple[str, ...]) -> str:
    return "-" + tag(field_name, values)


def _num(value: float | None, *, low: bool, exclusive: bool) -> str:
    if value is None:
        return "-inf" if low else "+inf"
    if not math.isfinite(value):
        raise InvalidInput("numeric filter bounds must be finite")
    text = repr(float(value))
    return "(" + text if exclusive else text


def numeric(
    field_name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    exclusive_low: bool = False,
    exclusive_high: bool = False,
) -> str:
    """``@field:[low high]``; None is an open end."""
    lo = _num(low, low=True, exclusive=exclusive_low)
    hi = _num(high, low=False, exclusive=exclusive_high)
    return f"@{_field(field_name)}:[{lo} {hi}]"


def any_of(*clauses: str) -> str:
    """Clause-level alternatives, ``(a | b)``: a document matching any of them (both engines, also
    of NUMERIC ranges and inside a KNN prefilter: tests/kenning/test_engines.py)."""
    if not clauses or any(not c for c in clauses):
        raise InvalidInput("no clauses given")
    return clauses[0] if len(clauses) == 1 else "(" + " | ".join(clauses) + ")"


def text_any(field_name: str, terms: list[str] | tuple[str, ...]) -> str:
    """Any of the (escaped) terms in a TEXT field: ``@f:t`` or ``(@f:t1 | @f:t2)``.

    valkey-search 1.2.1 rejects ``@f:(t1|t2)`` and even ``@f:(t)``; single-field terms joined by
    ``|`` work on both engines. Stop words must be dropped first (``phrases.search_words``):
    valkey-search answers an alternative whose term is a stop word with "Missing OR term".
    """
    if not terms:
        raise InvalidInput("no terms given")
    name = _field(field_name)
    alternatives = [f"@{name}:{escape(t)}" for t in dict.fromkeys(terms)]
    return alternatives[0] if len(alternatives) == 1 else "(" + " | ".join(alternatives) + ")"


def text_terms(clause: str) -> tuple[str, ...]:
    """The terms of a ``text_any`` clause, unescaped and casefolded (its
    inverse): any of them matches."""
    inner = clause[1:-1] if clause.startswith("(") and clause.endswith(")") else clause
    return tuple(
        re.sub(r"\\(.)", r"\1", part.split(":", 1)[1]).casefold() for part in inner.split(" | ")
    )


def namespace_clause(namespaces: tuple[str, ...]) -> str:
    """``@namespace:{a|b}`` for some namespaces; '' for none or all of them.
    An unknown name is refused."""
    unknown = [n for n in namespaces if n not in NAMESPACES]
    if unknown:
        raise InvalidInput(
            f"unknown namespace {unknown[0]!r}", hint=f"one of: {', '.join(NAMESPACES)}"
        )
    wanted = sorted(set(namespaces))
    return "" if not wanted or len(wanted) == len(NAMESPACES) else tag("namespace", wanted)


@dataclass(frozen=True)
class Search:
    """One FT.SEARCH call: a filter, optionally a KNN clause, sorting, paging, RETURN list.

    ``namespaces``: the namespaces searched (the one index holds them all); ()
    or all five is every one.
    """

    index: str
    namespaces: tuple[str, ...] = ()
    clauses: tuple[str, ...] = ()
    return_fields: tuple[str, ...] = ()
    knn: int | None = None
    ef_runtime: int = 64
    vector: bytes | None = None
    sort_by: str | None = None
    descending: bool = False
    offset: int = 0
    limit: int = 10
    extra_params: dict[str, str] = field(default_factory=dict)

    def filter_clauses(self) -> tuple[str, ...]:
        """``clauses`` and, unless every namespace is searched, the namespace
        clause (first: the cheapest)."""
        wanted = namespace_clause(self.namespaces)
        return (wanted, *self.clauses) if wanted else self.clauses

    def filter_text(self) -> str:
        clauses = self.filter_clauses()
        if clauses:
            return " ".join(clauses)
        return "*" if self.knn is not None else MATCH_ALL

    def query_text(self) -> str:
        base = self.filter_text()
        if self.knn is None:
            return base
        return (
            f"({base})=>[KNN {int(self.knn)} @{VECTOR_FIELD} $vec "
            f"EF_RUNTIME $ef AS {DISTANCE_ALIAS}]"
        )

    def args(self) -> list[str | bytes]:
        """The FT.SEARCH argument list (DIALECT 2, explicit RETURN).

        A KNN asks for all its ``knn`` rows and never sorts: valkey-search rejects SORTBY on the
        distance alias and RediSearch returns KNN rows unordered, so the store orders them by the
        returned distance and then applies ``offset``/``limit`` (``page``).
        """
        if self.knn is not None and self.sort_by is not None:
            raise InvalidInput(
                "a KNN search is ordered by distance; it cannot also sort by a field"
            )
        out: list[str | bytes] = ["FT.SEARCH", self.index, self.query_text(), *self._params()]
        if self.sort_by is not None:
            out += ["SORTBY", _field(self.sort_by), "DESC" if self.descending else "ASC"]
        returned = self.return_fields
        if self.knn is not None and returned and DISTANCE_ALIAS not in returned:
            returned = (*returned, DISTANCE_ALIAS)  # the store orders KNN rows by it
        if returned:
            out += ["RETURN", str(len(returned)), *returned]
        else:
            out += ["NOCONTENT"]
        window = (
            (0, int(self.knn))
            if self.knn is not None and self.limit > 0
            else (self.offset, self.limit)
        )
        out += ["LIMIT", str(window[0]), str(window[1]), "DIALECT", "2"]
        return out

    def _params(self) -> list[str | bytes]:
        params: list[str | bytes] = []
        if self.knn is not None:
            if self.vector is None:
                raise InvalidInput("a KNN search needs a query vector")
            params += ["vec", self.vector, "ef", str(self.ef_runtime)]
        for name, value in self.extra_params.items():
            params += [name, value]
        return ["PARAMS", str(len(params)), *params] if params else []

    def page(self, rows: list[T], distance: Callable[[T], float | None]) -> list[T]:
        """A KNN's rows nearest first, then this search's
        ``offset``/``limit``; other rows as they came."""
        if self.knn is None:
            return rows
        ordered = sorted(rows, key=lambda row: _distance_key(distance(row)))
        return ordered[self.offset : self.offset + self.limit]


def _distance_key(value: float | None) -> float:
    return math.inf if value is None else value
