"""The doctor's report model: one ``Check`` per line, the ``Report`` of a run, its table and JSON forms."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["ok", "warn", "fail", "skip"]
VERDICTS: tuple[Verdict, ...] = ("ok", "warn", "fail", "skip")
CHECK_NAMES = (
    "jtac build",
    "kernel",
    "SCHED_FIFO",
    "memory locking",
    "CPU governor",
    "isolated CPUs",
    "C-states",
    "RT throttling",
    "NMI watchdog",
    "transparent huge pages",
    "PCIe ASPM",
    "GPU driver",
    "robot route",
    "NIC interrupts",
    "NIC coalescing",
    "compatibility",
    "state stream",
    "wake-up jitter",
    "native loop",
)


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    value: str  # what was measured or found, with units
    verdict: Verdict
    fix: str = ""  # the command or setting that fixes a line that is not ok; "" on an ok line
    data: dict[str, Any] = field(default_factory=dict)  # the measured numbers, machine-readable

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class Report:
    """Every check of one ``run``, with where and when it ran."""

    checks: tuple[Check, ...]
    host: str  # uname -srm
    date_utc: str  # ISO 8601
    seconds: float  # duration of each timing measurement [s]
    robot_ip: str | None = None

    @property
    def exit_code(self) -> int:
        """0 when no line failed, 1 otherwise."""
        return 1 if any(c.verdict == "fail" for c in self.checks) else 0

    def check(self, name: str) -> Check:
        """The line called ``name`` (KeyError if there is none)."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def counts(self) -> dict[str, int]:
        """Lines per verdict, in VERDICTS order."""
        return {v: sum(c.verdict == v for c in self.checks) for v in VERDICTS}

    def format_table(self) -> str:
        """The aligned text table: check, verdict, value; each fix on the line below its check."""
        name_w = max(len("CHECK"), *(len(c.name) for c in self.checks))
        verdict_w = max(len(v) for v in (*VERDICTS, "VERDICT"))
        lines = [
            f"jtac doctor on {self.host}, {self.date_utc}"
            + (f", robot {self.robot_ip}" if self.robot_ip else ""),
            "",
            f"{'CHECK':<{name_w}}  {'VERDICT':<{verdict_w}}  VALUE",
        ]
        indent = " " * (name_w + verdict_w + 4)
        for c in self.checks:
            lines.append(f"{c.name:<{name_w}}  {c.verdict.upper():<{verdict_w}}  {c.value}")
            if c.fix:
                lines.append(f"{indent}fix: {c.fix}")
        counts = ", ".join(f"{n} {v}" for v, n in self.counts().items())
        lines += ["", f"{counts}; exit code {self.exit_code}"]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Plain types only (for JSON), with the exit code."""
        return {
            "host": self.host,
            "date_utc": self.date_utc,
            "seconds": self.seconds,
            "robot_ip": self.robot_ip,
            "exit_code": self.exit_code,
            "checks": [dataclasses.asdict(c) for c in self.checks],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Report:
        """The inverse of to_dict (the exit code is derived, not read)."""
        return cls(
            checks=tuple(Check(**c) for c in d["checks"]),
            host=d["host"],
            date_utc=d["date_utc"],
            seconds=float(d["seconds"]),
            robot_ip=d.get("robot_ip"),
        )

    @classmethod
    def from_json(cls, text: str) -> Report:
        return cls.from_dict(json.loads(text))
