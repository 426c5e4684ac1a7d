"""The node's goal log on its own, with a clock the test steps (jtac_ros/goal_log.py): the token
bucket's burst and rate, the one report of suppressed lines, notes once per NOTE_REPEAT_S. Over real
DDS, with the node's own clock, the storm test in test_node_jtc.py."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("rclpy")

from jtac_ros.goal_log import LOG_BURST_LINES, LOG_LINES_PER_S, NOTE_REPEAT_S, GoalLog

SUPPRESSED = re.compile(r"^(\d+) goal log lines suppressed in the last (\d+\.\d) s")


class _Clock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


class _Logger:
    def __init__(self, clock: _Clock) -> None:
        self.clock = clock
        self.lines: list[tuple[float, str, str]] = []  # (time [s], level, text)

    def info(self, text: str) -> None:
        self.lines.append((self.clock.now_s, "info", text))

    def warning(self, text: str) -> None:
        self.lines.append((self.clock.now_s, "warning", text))

    def error(self, text: str) -> None:
        self.lines.append((self.clock.now_s, "error", text))


def _log_and_logger():
    clock = _Clock()
    logger = _Logger(clock)
    return GoalLog(logger, clock=clock), logger, clock


def _reported(logger) -> int:
    return sum(int(m.group(1)) for _, _, text in logger.lines if (m := SUPPRESSED.match(text)))


def test_a_burst_passes_then_the_rate_and_every_suppressed_line_is_counted_once():
    log, logger, clock = _log_and_logger()
    # 60 lines at once: the burst passes, the other 40 are counted.
    passed = [log.log("warning", f"refused {k}") for k in range(60)]
    assert passed == [True] * LOG_BURST_LINES + [False] * (60 - LOG_BURST_LINES)
    assert len(logger.lines) == LOG_BURST_LINES
    # The report waits for a token (1 / LOG_LINES_PER_S), then comes once, with the count and span.
    clock.now_s += 0.5 / LOG_LINES_PER_S
    log.flush()
    assert _reported(logger) == 0
    clock.now_s += 0.6 / LOG_LINES_PER_S
    log.flush()
    log.flush()
    assert _reported(logger) == 60 - LOG_BURST_LINES
    assert SUPPRESSED.match(logger.lines[-1][2]).group(2) == f"{1.1 / LOG_LINES_PER_S:.1f}"
    assert logger.lines[-1][1] == "warning"


def test_a_storm_of_any_pace_keeps_the_bucket_and_loses_no_line():
    log, logger, clock = _log_and_logger()
    attempts = 0
    # 3 s at 50 lines/s, 4 s at 4 lines/s (under the rate: the bucket refills), 1 s at 200 lines/s.
    for rate_per_s, duration_s in ((50.0, 3.0), (4.0, 4.0), (200.0, 1.0)):
        for _ in range(round(rate_per_s * duration_s)):
            clock.now_s += 1.0 / rate_per_s
            log.log("info", "a goal line")
            attempts += 1
    for _ in range(3):  # the state timer's flushes
        clock.now_s += 1.0 / LOG_LINES_PER_S
        log.flush()
    goal_lines = [t for t, _, text in logger.lines if text == "a goal line"]
    assert len(goal_lines) + _reported(logger) == attempts
    # The token bucket: in any window, at most the burst plus the rate × its length (reports included).
    stamps = [t for t, _, _ in logger.lines]
    for i, t_i in enumerate(stamps):
        for j in range(i, len(stamps)):
            assert j - i + 1 <= LOG_BURST_LINES + LOG_LINES_PER_S * (stamps[j] - t_i) + 1e-9
    # Under the rate the lines pass one by one: all 16 of the slow phase's tail (the bucket refilled).
    slow = [t for t in goal_lines if 103.0 < t <= 107.0]
    assert len(slow) == 16


def test_lines_keep_their_level_and_a_note_is_said_once_per_repeat_period():
    log, logger, clock = _log_and_logger()
    log.log("info", "succeeded")
    log.log("warning", "refused")
    log.log("error", "aborted")
    assert [level for _, level, _ in logger.lines] == ["info", "warning", "error"]
    for _ in range(5):
        log.note("path_tolerance ignored")
        clock.now_s += 1.0
    assert [text for _, _, text in logger.lines].count("path_tolerance ignored") == 1
    clock.now_s += NOTE_REPEAT_S
    log.note("path_tolerance ignored")
    assert [text for _, _, text in logger.lines].count("path_tolerance ignored") == 2
