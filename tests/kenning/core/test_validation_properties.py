"""Property tests of the date and tag validators (hypothesis): whatever comes in, the answer is a
value the store can hold and read back, or InvalidInput; never another exception."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from kenning.core import query, validation
from kenning.core.errors import InvalidInput
from kenning.core.models import iso

ANY_DATE = st.one_of(
    st.text(max_size=40),
    st.integers(),
    st.floats(),
    st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
    st.datetimes().map(lambda d: d.isoformat()),
    st.dates().map(lambda d: d.isoformat()),
)
IN_RANGE = st.datetimes(
    min_value=datetime(1900, 1, 2), max_value=datetime(8999, 12, 30), timezones=st.timezones()
)


def _refused(check: Callable[[], object]) -> InvalidInput | None:
    """The InvalidInput ``check`` raised, or None; any other exception fails the test."""
    try:
        check()
    except InvalidInput as exc:
        return exc
    return None


@given(ANY_DATE.filter(lambda v: v != ""))  # "" means "not set"
def test_a_date_is_stored_in_range_or_refused(value: str | float) -> None:
    refused = _refused(lambda: validation.timestamp("event_date", value))
    if refused is not None:
        assert refused.hint == validation.DATE_HINT
        return
    seconds = validation.timestamp("event_date", value)
    assert seconds is not None
    assert validation.EARLIEST <= seconds < validation.LATEST
    shown = iso(seconds)
    assert shown is not None
    assert shown.endswith("Z")


@given(IN_RANGE.map(lambda d: d.replace(microsecond=0)))
def test_every_date_in_range_reads_back_as_the_same_instant(moment: datetime) -> None:
    seconds = validation.timestamp("valid_from", moment.isoformat())
    assert seconds is not None
    expected = moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"
    assert iso(seconds) == expected


@given(IN_RANGE)
def test_a_date_with_microseconds_reads_back_within_a_second(moment: datetime) -> None:
    """Epoch seconds are a float: far from 1970 a microsecond is below its precision (about 15 us
    in the year 4000), so .999999 may show as the next second; never further off than that."""
    seconds = validation.timestamp("valid_from", moment.isoformat())
    assert seconds is not None
    shown = iso(seconds)
    assert shown is not None
    back = datetime.fromisoformat(shown.replace("Z", "+00:00"))
    assert abs((back - moment).total_seconds()) < 1.0


@given(st.floats() | st.integers(min_value=-(10**30), max_value=10**30))
def test_iso_never_raises(seconds: float) -> None:
    assert isinstance(iso(seconds), str)


@given(st.text(max_size=120))
def test_a_tag_is_allowlisted_and_stable_or_refused(value: str) -> None:
    refused = _refused(lambda: validation.tag(value))
    if refused is not None:
        assert refused.hint == validation.TAG_RULE
        return
    normal = validation.tag(value)
    assert validation.TAG_RE.match(normal)
    assert validation.tag(normal) == normal
    # an escaped * is still a wildcard on valkey-search: never let one through
    assert "*" not in normal
    assert query.tag("tags", [normal]).startswith("@tags:{")


@given(st.lists(st.text(max_size=30), max_size=30))
def test_a_tag_list_is_bounded_and_unique_or_refused(values: list[str]) -> None:
    if _refused(lambda: validation.tags(values)) is not None:
        return
    normal = validation.tags(values)
    assert len(normal) <= validation.MAX_TAGS
    assert len(set(normal)) == len(normal)
