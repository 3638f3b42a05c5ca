"""The machine facts a benchmark run records."""

from __future__ import annotations

from bench import system


def test_steal_percent_is_the_share_of_cpu_time_given_to_other_guests() -> None:
    assert system.steal_percent((100, 1_000), (150, 1_200)) == 25.0
    assert system.steal_percent((100, 1_000), (100, 1_200)) == 0.0
    assert system.steal_percent((5, 10), (5, 10)) is None  # no time passed: unknown, never 0


def test_cpu_times_reads_this_machine() -> None:
    steal, total = system.cpu_times()
    assert total > 0  # Linux: /proc/stat is there (the run fails loudly elsewhere otherwise)
    assert 0 <= steal <= total
