"""``jtac doctor`` (the jtac_py.doctor package and its verb, jtac_py/cli/doctor.py): no ROS, no robot.

The machine-dependent lines are judged against facts this file reads itself (its own SCHED_FIFO attempt,
the rlimits, /sys); the rules behind the verdicts are tested on fixed inputs and fake /sys trees.
"""

import glob
import json
import os
import re
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from jtac_py import doctor
from jtac_py.doctor import CHECK_NAMES, VERDICTS, Check, JitterStats, Report, Route, kernel, network
from jtac_ros.cli import main

REPO = Path(__file__).resolve().parents[2]
SECONDS = 1.0
LATENESS_RE = re.compile(r"median ([\d.]+) µs, p99 ([\d.]+) µs, max ([\d.]+) µs")


@pytest.fixture(scope="module")
def report() -> Report:
    policy_before = os.sched_getscheduler(0)
    result = doctor.run(None, SECONDS)
    assert os.sched_getscheduler(0) == policy_before  # the measurements ran on threads of their own
    return result


def _fifo_granted_here() -> bool:
    """This test's own SCHED_FIFO 80 attempt, on a thread of its own."""
    granted = []

    def attempt() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(80))
        except OSError:
            granted.append(False)
        else:
            granted.append(True)
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return granted[0]


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


# ------------------------------------------------------------------------------------------ the report
def test_every_check_is_there_once_in_order(report):
    assert tuple(c.name for c in report.checks) == CHECK_NAMES
    assert report.seconds == SECONDS and report.robot_ip is None
    uname = os.uname()
    assert report.host == f"{uname.sysname} {uname.release} {uname.machine}"


def test_verdicts_are_known_and_every_non_ok_line_names_a_fix(report):
    for c in report.checks:
        assert c.verdict in VERDICTS, c
        assert c.value.strip(), c
        if c.verdict == "ok":
            assert c.fix == "", c
        else:
            assert c.fix.strip(), c


def test_exit_code_is_one_exactly_when_a_line_failed(report):
    assert report.exit_code == (1 if any(c.verdict == "fail" for c in report.checks) else 0)
    lines = [Check("a", "1 ms", "ok"), Check("b", "x", "warn", "do y"), Check("c", "z", "skip", "do w")]
    passing = Report(tuple(lines), "host", "2026-01-01T00:00:00Z", 1.0)
    assert passing.exit_code == 0
    assert passing.counts() == {"ok": 1, "warn": 1, "fail": 0, "skip": 1}
    failing = Report((*lines, Check("d", "refused", "fail", "do v")), "host", "2026-01-01T00:00:00Z", 1.0)
    assert failing.exit_code == 1
    with pytest.raises(ValueError, match="verdict"):
        Check("e", "x", "bad")  # type: ignore[arg-type]


def test_wakeup_jitter_reports_median_p99_max_in_microseconds(report):
    line = report.check("wake-up jitter")
    match = LATENESS_RE.search(line.value)
    assert match, line.value
    median_us, p99_us, max_us = map(float, match.groups())
    assert median_us <= p99_us <= max_us
    data = line.data
    assert data["periods"] == round(SECONDS * 1000)  # one lateness per 1 ms period
    assert 0 <= data["late_periods"] <= data["periods"]
    # The text shows the measured numbers (one decimal).
    assert abs(median_us - data["median_us"]) <= 0.05
    assert abs(p99_us - data["p99_us"]) <= 0.05
    assert abs(max_us - data["max_us"]) <= 0.05
    # A late period is one woken more than 1000 µs late: none unless the maximum is.
    assert (data["late_periods"] > 0) == (data["max_us"] > 1000.0)
    stats = JitterStats(**{k: data[k] for k in ("periods", "median_us", "p99_us", "max_us", "late_periods")})
    assert line.verdict == doctor.jitter_verdict(stats)
    granted = _fifo_granted_here()
    assert data["fifo"] is granted
    assert ("SCHED_FIFO 80" in line.value) is granted
    assert ("normal priority" in line.value) is not granted
    assert "upper bound" in line.value


def test_native_loop_serves_one_packet_per_millisecond(report):
    line = report.check("native loop")
    data = line.data
    assert data["exit_status"] == "OK" and data["device_errors"] == 0
    # Every tick of the simulated arm's clock is either served or counted missed.
    cycles = data["packets"] + data["missed_cycles"]
    # elapsed_s also holds the thread's start and join, when the arm's clock does not run yet.
    assert (data["elapsed_s"] - 0.1) * 1000 <= cycles <= data["elapsed_s"] * 1000 + 2
    assert SECONDS <= data["elapsed_s"] < SECONDS + 1.0
    assert data["max_command_interval_ms"] >= 0.9  # at least about one period between two commands
    assert f"{data['packets']} packets, {data['missed_cycles']} cycles missed" in line.value
    if data["missed_cycles"] == 0:
        assert line.verdict == "ok"
    else:
        assert line.verdict in ("warn", "fail") and str(data["missed_cycles"]) in line.value


def test_sched_fifo_line_agrees_with_our_own_attempt(report):
    line = report.check("SCHED_FIFO")
    granted = _fifo_granted_here()
    assert line.data["granted"] is granted
    assert line.verdict == ("ok" if granted else "fail")
    soft, hard = resource.getrlimit(resource.RLIMIT_RTPRIO)
    assert (line.data["rtprio_soft"], line.data["rtprio_hard"]) == (soft, hard)
    assert line.data["root"] is (os.geteuid() == 0)
    status = Path("/proc/self/status").read_text()
    cap_eff = int(re.search(r"^CapEff:\s*(\w+)$", status, re.MULTILINE).group(1), 16)
    assert line.data["cap_sys_nice"] is bool(cap_eff >> 23 & 1)


def test_memory_locking_line_agrees_with_the_limit(report):
    line = report.check("memory locking")
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    status = Path("/proc/self/status").read_text()
    ipc_lock = bool(int(re.search(r"^CapEff:\s*(\w+)$", status, re.MULTILINE).group(1), 16) >> 14 & 1)
    enough = soft == resource.RLIM_INFINITY or soft >= 64 * 1024 * 1024 or ipc_lock
    assert line.verdict == ("ok" if enough else "warn")
    if not enough:
        assert "memlock" in line.fix


def test_governor_line_agrees_with_sysfs(report):
    line = report.check("CPU governor")
    files = glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")
    if not files:
        assert line.verdict == "skip" and "no cpufreq" in line.value
    else:
        governors = {Path(f).read_text().strip() for f in files}
        assert line.verdict == ("ok" if governors == {"performance"} else "warn")


def test_isolated_cpus_line_agrees_with_sysfs(report):
    line = report.check("isolated CPUs")
    isolated = Path("/sys/devices/system/cpu/isolated").read_text().strip()
    assert line.verdict == ("ok" if doctor.parse_cpu_list(isolated) else "warn")
    online = doctor.parse_cpu_list(Path("/sys/devices/system/cpu/online").read_text())
    assert line.value.startswith(f"{len(online)} CPUs online")


def test_kernel_line_agrees_with_uname(report):
    line = report.check("kernel")
    flag = Path("/sys/kernel/realtime")
    rt = "PREEMPT_RT" in os.uname().version or (flag.exists() and flag.read_text().strip() == "1")
    assert line.verdict == ("ok" if rt else "warn")
    if not rt:
        assert "Setting up the real-time kernel" in line.fix


def test_route_is_skipped_without_a_robot_address(report):
    line = report.check("robot route")
    assert line.verdict == "skip" and "--robot-ip" in line.fix


def test_json_round_trips(report):
    text = report.to_json()
    parsed = json.loads(text)
    assert parsed["exit_code"] == report.exit_code
    assert [c["name"] for c in parsed["checks"]] == list(CHECK_NAMES)
    assert Report.from_json(text) == report
    assert Report.from_dict(parsed).to_dict() == parsed


def test_table_is_aligned_with_each_fix_under_its_line(report):
    table = report.format_table().splitlines()
    header = next(line for line in table if line.startswith("CHECK"))
    verdict_col, value_col = header.index("VERDICT"), header.index("VALUE")
    rows = [line for line in table if line.split("  ")[0].strip() in CHECK_NAMES]
    assert len(rows) == len(CHECK_NAMES)
    for row, check in zip(rows, report.checks, strict=True):
        assert row[verdict_col:].startswith(check.verdict.upper())
        assert row[value_col:] == check.value
    fixes = [line.strip().removeprefix("fix: ") for line in table if line.startswith(" ") and "fix:" in line]
    assert fixes == [c.fix for c in report.checks if c.fix]
    assert table[-1].endswith(f"exit code {report.exit_code}")


def test_zero_seconds_skips_the_measurements():
    quick = doctor.run(None, 0.0)
    for name in ("wake-up jitter", "native loop"):
        assert quick.check(name).verdict == "skip"
        assert "--seconds" in quick.check(name).fix
    with pytest.raises(ValueError):
        doctor.run(None, -1.0)


# ------------------------------------------------------------------------------- rules on fixed inputs
def test_jitter_statistics_and_thresholds():
    lateness_ns = [10_000] * 98 + [150_000, 2_500_000]  # 10 µs, one 150 µs, one 2.5 ms
    stats = doctor.jitter_stats(lateness_ns)
    assert stats == JitterStats(periods=100, median_us=10.0, p99_us=150.0, max_us=2500.0, late_periods=1)
    assert doctor.jitter_verdict(stats) == "warn"  # p99 >= 100 µs and a missed cycle
    assert doctor.jitter_stats([1, 2, 3, 4]).median_us == 0.0025  # even count: mean of the middle two

    def verdict(p99_us: float, max_us: float, late: int = 0) -> str:
        return doctor.jitter_verdict(JitterStats(1000, 5.0, p99_us, max_us, late))

    assert verdict(99.9, 300.0) == "ok"
    assert verdict(100.0, 300.0) == "warn"
    assert verdict(499.9, 900.0) == "warn"
    assert verdict(500.0, 900.0) == "fail"
    assert verdict(50.0, 1500.0, late=2) == "warn"  # p99 fine, but two cycles missed
    with pytest.raises(ValueError):
        doctor.jitter_stats([])


@pytest.mark.parametrize(
    ("version", "flag", "mode", "cmdline", "kind"),
    [
        ("#1 SMP PREEMPT_RT Debian 6.1.99-1", None, None, "", "PREEMPT_RT"),
        ("#1 SMP PREEMPT RT Mon Feb 3 2020", None, None, "", "PREEMPT_RT"),
        ("#1 SMP PREEMPT_DYNAMIC", "1", None, "", "PREEMPT_RT"),
        ("#1 SMP PREEMPT_DYNAMIC", None, "full", "", "lowlatency"),
        ("#1 SMP PREEMPT_DYNAMIC", None, "voluntary", "preempt=full", "generic"),  # debugfs wins
        ("#1 SMP PREEMPT_DYNAMIC", None, None, "root=/dev/sda1 preempt=full quiet", "lowlatency"),
        ("#1 SMP PREEMPT_DYNAMIC", None, None, "root=/dev/sda1", "generic"),
        ("#52-Ubuntu SMP PREEMPT Tue Oct 1", None, None, "", "lowlatency"),
        ("#1 SMP Debian 6.1.0-26", None, None, "", "generic"),
    ],
)
def test_kernel_classification(version, flag, mode, cmdline, kind):
    assert doctor.classify_kernel(version, flag, mode, cmdline)[0] == kind


def test_kernel_reads_the_realtime_flag_and_the_debugfs_mode(tmp_path):
    _write(tmp_path, "kernel/realtime", "1")
    assert doctor.check_kernel(sys_root=tmp_path, proc_root=tmp_path).verdict == "ok"
    assert kernel._active_preempt_mode("none voluntary (full) lazy") == "full"


def test_governor_rules_on_a_fake_sysfs(tmp_path):
    assert doctor.check_governor(tmp_path).verdict == "skip"
    _write(tmp_path, "devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave")
    _write(tmp_path, "devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance")
    _write(tmp_path, "devices/system/cpu/cpu2/cpufreq/scaling_governor", "performance")
    mixed = doctor.check_governor(tmp_path)
    assert mixed.verdict == "warn"
    assert mixed.value.startswith("performance on CPU 1-2; powersave on CPU 0")
    assert "cpupower frequency-set -g performance" in mixed.fix
    _write(tmp_path, "devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance")
    assert doctor.check_governor(tmp_path).verdict == "ok"


def test_isolated_cpu_rules_on_a_fake_sysfs(tmp_path):
    _write(tmp_path, "devices/system/cpu/online", "0-3")
    _write(tmp_path, "devices/system/cpu/isolated", "")
    none = doctor.check_isolated_cpus(tmp_path)
    assert none.verdict == "warn"
    assert "isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3" in none.fix and "cpu_affinity: [2, 3]" in none.fix
    _write(tmp_path, "devices/system/cpu/online", "0-1")
    assert "isolcpus=1 " in doctor.check_isolated_cpus(tmp_path).fix
    _write(tmp_path, "devices/system/cpu/isolated", "1")
    _write(tmp_path, "devices/system/cpu/nohz_full", "1")
    some = doctor.check_isolated_cpus(tmp_path)
    assert some.verdict == "ok" and some.data["isolated"] == [1] and some.data["nohz_full"] == [1]
    assert doctor.parse_cpu_list("0-2,5,7-8") == [0, 1, 2, 5, 7, 8]
    assert doctor.parse_cpu_list("(null)") == []


def test_parse_route_get():
    local = doctor.parse_route_get(
        "127.0.0.1", "local 127.0.0.1 dev lo src 127.0.0.1 uid 0 \n    cache <local>"
    )
    assert local == Route("127.0.0.1", "lo", "127.0.0.1", None, True)
    routed = doctor.parse_route_get("8.8.8.8", "8.8.8.8 via 192.0.2.1 dev eth0 src 192.0.2.2 uid 0\n cache")
    assert routed == Route("8.8.8.8", "eth0", "192.0.2.2", "192.0.2.1", False)
    direct = doctor.parse_route_get("172.16.0.2", "172.16.0.2 dev enp3s0 src 172.16.0.1 uid 1000\n cache")
    assert direct == Route("172.16.0.2", "enp3s0", "172.16.0.1", None, False)
    with pytest.raises(ValueError):
        doctor.parse_route_get("10.0.0.1", "RTNETLINK answers: Network is unreachable")


def test_route_to_loopback_names_lo_and_its_mtu():
    line = doctor.check_route("127.0.0.1")
    mtu = int(Path("/sys/class/net/lo/mtu").read_text())
    assert line.verdict == "ok"
    assert line.data["interface"] == "lo" and line.data["mtu"] == mtu and line.data["gateway"] is None
    assert "dev lo" in line.value and f"MTU {mtu}" in line.value
    assert "not a robot link" in line.value


@pytest.mark.parametrize(
    ("route", "mtu", "speed", "state", "verdict", "in_fix"),
    [
        (Route("172.16.0.2", "eth1", "172.16.0.1", None, False), "1500", "1000", "up", "ok", ""),
        (Route("172.16.0.2", "eth1", "172.16.0.1", None, False), "9000", "1000", "up", "warn", "mtu 1500"),
        (Route("172.16.0.2", "eth1", "172.16.0.1", None, False), "1500", "10", "up", "warn", "100 Mb/s"),
        (Route("172.16.0.2", "eth1", "172.16.0.1", None, False), "1500", "-1", "down", "fail", "link set"),
        (Route("10.1.0.2", "eth0", "10.0.0.5", "10.0.0.1", False), "9000", "1000", "up", "warn", "directly"),
    ],
)
def test_route_rules(tmp_path, monkeypatch, route, mtu, speed, state, verdict, in_fix):
    monkeypatch.setattr(network, "_route_get", lambda destination: route)
    _write(tmp_path, f"class/net/{route.interface}/mtu", mtu)
    _write(tmp_path, f"class/net/{route.interface}/speed", speed)
    _write(tmp_path, f"class/net/{route.interface}/operstate", state)
    line = doctor.check_route(route.destination, sys_root=tmp_path)
    assert line.verdict == verdict
    assert line.data["mtu"] == int(mtu)
    assert line.data["speed_mb_s"] == (int(speed) if int(speed) > 0 else None)
    assert in_fix in line.fix
    if route.gateway:
        assert "mtu" not in line.fix  # the gateway's interface is not the robot's link


def test_route_failure_fails(monkeypatch):
    def unreachable(destination: str) -> Route:
        raise RuntimeError("RTNETLINK answers: Network is unreachable")

    monkeypatch.setattr(network, "_route_get", unreachable)
    line = doctor.check_route("172.16.0.2")
    assert line.verdict == "fail" and "unreachable" in line.value and "ip addr add" in line.fix


def test_robot_address_must_be_a_literal_ip():
    assert doctor.robot_address(" 172.16.0.2 ") == "172.16.0.2"
    assert doctor.robot_address("::1") == "::1"
    for bad in ("robot.local", "172.16.0.256", ""):
        with pytest.raises(ValueError):
            doctor.robot_address(bad)
    with pytest.raises(ValueError):
        doctor.run("robot.local", 0.0)


# ------------------------------------------------------------------------------------------------ the CLI
def test_cli_prints_the_table_and_returns_the_exit_code(capsys):
    code = main(["doctor", "--seconds", "1"])
    out = capsys.readouterr().out
    rows = {line.split("  ")[0]: line for line in out.splitlines() if line.split("  ")[0] in CHECK_NAMES}
    assert set(rows) == set(CHECK_NAMES)
    verdicts = {name: re.split(r"\s{2,}", row)[1].lower() for name, row in rows.items()}
    assert set(verdicts.values()) <= set(VERDICTS)
    assert code == (1 if "fail" in verdicts.values() else 0)
    assert out.rstrip().endswith(f"exit code {code}")
    match = LATENESS_RE.search(rows["wake-up jitter"])
    assert match and float(match.group(1)) <= float(match.group(2)) <= float(match.group(3))


def test_cli_json_with_loopback_robot(capsys):
    code = main(["doctor", "--seconds", "0.5", "--robot-ip", "127.0.0.1", "--json"])
    parsed = json.loads(capsys.readouterr().out)
    assert parsed["exit_code"] == code and parsed["robot_ip"] == "127.0.0.1" and parsed["seconds"] == 0.5
    route = next(c for c in parsed["checks"] if c["name"] == "robot route")
    assert route["data"]["interface"] == "lo"
    assert route["data"]["mtu"] == int(Path("/sys/class/net/lo/mtu").read_text())
    assert "not a robot link" in route["value"]
    jitter = next(c for c in parsed["checks"] if c["name"] == "wake-up jitter")
    assert jitter["data"]["periods"] == 500
    assert Report.from_dict(parsed).to_dict() == parsed


@pytest.mark.parametrize("argv", [["--robot-ip", "robot.local"], ["--seconds", "-1"], ["--seconds", "nan"]])
def test_cli_refuses_bad_values(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["doctor", *argv])
    assert exc.value.code == 2
    assert "jtac doctor: error" in capsys.readouterr().err


def test_cli_doctor_imports_no_ros():
    script = (
        "import sys\n"
        "from jtac_ros.cli import main\n"
        "code = main(['doctor', '--seconds', '0', '--json'])\n"
        "print('ROS', sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rcl_interfaces')))\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60, check=False
    )
    assert result.stdout.rstrip().splitlines()[-1] == "ROS []", result.stderr
    report_text = result.stdout[: result.stdout.rindex("ROS [")]
    assert json.loads(report_text)["exit_code"] == result.returncode
