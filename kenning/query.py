"""Query building for the FT.* subset both search engines serve (docs/valkey-search.md). Pure.

Every value that reaches a query string goes through ``escape``; there is no other path.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from kenning.errors import InvalidInput
from kenning.schema import DISTANCE_ALIAS, VECTOR_FIELD

_SAFE = re.compile(r"[A-Za-z0-9_]")
_FIELD = re.compile(r"^[a-z_]{1,32}$")


def escape(value: str) -> str:
    """Backslash-escape every character that is not an ASCII letter, digit or underscore.

    Escaped punctuation is read literally by both engines inside TAG braces and TEXT terms, so a
    value can never close a clause, open an alternative or name another field.
    """
    if not value:
        raise InvalidInput("empty value in a query filter", hint="give a non-empty value")
    if any(ch in value for ch in "\x00\r\n"):
        raise InvalidInput("control characters are not allowed in filter values")
    return "".join(ch if _SAFE.match(ch) else "\\" + ch for ch in value)


def _field(name: str) -> str:
    if not _FIELD.match(name):
        raise InvalidInput(f"bad field name {name!r}")
    return name


def tag(field_name: str, values: list[str] | tuple[str, ...]) -> str:
    """``@field:{a|b}`` matching any of the values."""
    if not values:
        raise InvalidInput(f"no values given for {field_name}")
    return "@" + _field(field_name) + ":{" + "|".join(escape(v) for v in values) + "}"


def not_tag(field_name: str, values: list[str] | tuple[str, ...]) -> str:
    return "-" + tag(field_name, values)


def _num(value: float | None, *, low: bool, exclusive: bool) -> str:
    if value is None:
        return "-inf" if low else "+inf"
    if not math.isfinite(value):
        raise InvalidInput("numeric filter bounds must be finite")
    text = repr(float(value))
    return "(" + text if exclusive else text


def numeric(field_name: str, low: float | None = None, high: float | None = None, *,
            exclusive_low: bool = False, exclusive_high: bool = False) -> str:
    """``@field:[low high]``; None is an open end."""
    lo = _num(low, low=True, exclusive=exclusive_low)
    hi = _num(high, low=False, exclusive=exclusive_high)
    return f"@{_field(field_name)}:[{lo} {hi}]"


def text_any(field_name: str, terms: list[str] | tuple[str, ...]) -> str:
    """``@field:(t1|t2)``: any of the (escaped) terms in a TEXT field."""
    if not terms:
        raise InvalidInput("no terms given")
    return "@" + _field(field_name) + ":(" + "|".join(escape(t) for t in terms) + ")"


@dataclass(frozen=True)
class Search:
    """One FT.SEARCH call: a filter, optionally a KNN clause, sorting, paging, RETURN list."""

    index: str
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

    def filter_text(self) -> str:
        return " ".join(self.clauses) if self.clauses else "*"

    def query_text(self) -> str:
        base = self.filter_text()
        if self.knn is None:
            return base
        return f"({base})=>[KNN {int(self.knn)} @{VECTOR_FIELD} $vec EF_RUNTIME $ef AS {DISTANCE_ALIAS}]"

    def args(self) -> list[str | bytes]:
        """The FT.SEARCH argument list (DIALECT 2, explicit RETURN, SORTBY distance for KNN)."""
        out: list[str | bytes] = ["FT.SEARCH", self.index, self.query_text()]
        params = dict(self.extra_params)
        if self.knn is not None:
            if self.vector is None:
                raise InvalidInput("a KNN search needs a query vector")
            out += ["PARAMS", str(2 * (len(params) + 2)), "vec", self.vector, "ef", str(self.ef_runtime)]
            for name, value in params.items():
                out += [name, value]
        elif params:
            out += ["PARAMS", str(2 * len(params))]
            for name, value in params.items():
                out += [name, value]
        sort = DISTANCE_ALIAS if self.knn is not None and self.sort_by is None else self.sort_by
        if sort is not None:
            out += ["SORTBY", sort, "DESC" if self.descending else "ASC"]
        if self.return_fields:
            out += ["RETURN", str(len(self.return_fields)), *self.return_fields]
        else:
            out += ["NOCONTENT"]
        out += ["LIMIT", str(self.offset), str(self.limit), "DIALECT", "2"]
        return out
