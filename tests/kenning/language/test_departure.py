"""Which texts record leaving an approach behind (kenning.language.departure)."""

from __future__ import annotations

import pytest

from kenning.language.departure import records_departure


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("We replaced Celery with arq for background jobs.", "celery"),
        ("Celery was dropped because its workers leaked memory under load.", "celery"),
        ("We moved CI from Jenkins to GitHub Actions.", "jenkins"),
        ("We migrated the orders store from MongoDB to Postgres.", "mongodb"),
        ("Webpack was given up because cold builds took four minutes.", "webpack"),
        ("We use arq instead of Celery now.", "celery"),
        ("We stopped using Tortoise after the migrations broke.", "tortoise"),
    ],
)
def test_a_replacement_or_a_reason_is_a_departure(text: str, term: str) -> None:
    assert records_departure(text, term)


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("We use Celery for background jobs.", "celery"),
        ("Plan: move the ORM layer to Tortoise for async support.", "tortoise"),
        ("Idea: Tortoise ORM could give us async models.", "tortoise"),
        ("Celery is great: replace cron with it.", "celery"),
        ("We replaced cron with Celery.", "celery"),  # Celery is what came in
    ],
)
def test_a_recommendation_is_not(text: str, term: str) -> None:
    assert not records_departure(text, term)
