"""The tuning lines of ``jtac doctor`` (C-states, RT throttling, NMI watchdog, transparent huge pages,
PCIe ASPM, GPU driver, NIC interrupts, NIC coalescing, compatibility, state stream) on fake /proc, /sys
and /dev trees, fixed inputs and a fake robot handshake server: the machine that runs the tests has no
physical NIC, no GPU, no robot. The state stream against a robot is proven on franka-sim
(test/franka/test_doctor_on_franka_sim.py)."""

import errno
import shutil
import socket
import struct
import subprocess
import threading
from pathlib import Path

import pytest

from jtac_py import doctor
from jtac_py.doctor import CHECK_NAMES, Check, compat, cstates, gpu, nic, state_stream, tunables

TUNING_LINES = (
    "C-states",
    "RT throttling",
    "NMI watchdog",
    "transparent huge pages",
    "PCIe ASPM",
    "GPU driver",
    "NIC interrupts",
    "NIC coalescing",
    "compatibility",
    "state stream",
)


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _assert_line(line: Check, verdict: str, *in_value: str) -> None:
    """The verdict, the measured facts in the value, and a fix on every line that is not ok."""
    assert line.verdict == verdict, line
    for text in in_value:
        assert text in line.value, (text, line.value)
    assert (line.fix == "") is (verdict == "ok"), line


# ------------------------------------------------------------------------------------------- the report
def test_every_tuning_line_is_in_the_report_in_order():
    report = doctor.run(None, 0.0)
    assert tuple(c.name for c in report.checks) == CHECK_NAMES
    assert set(TUNING_LINES) <= set(CHECK_NAMES)
    for name in TUNING_LINES:
        line = report.check(name)
        assert line.value.strip() and (line.verdict == "ok" or line.fix.strip()), line
    assert report.check("state stream").verdict == "skip"  # no robot address
    assert "not asked" in report.check("compatibility").value


# ------------------------------------------------------------------------------------------ RT throttling
@pytest.mark.parametrize(
    ("runtime", "verdict", "in_value"),
    [
        ("-1", "ok", "never throttled"),
        ("950000", "warn", "held off for 50000 µs of each period"),
        ("0", "fail", "may not run at all"),
    ],
)
def test_rt_throttling(tmp_path, runtime, verdict, in_value):
    _write(tmp_path, "sys/kernel/sched_rt_runtime_us", runtime)
    _write(tmp_path, "sys/kernel/sched_rt_period_us", "1000000")
    line = doctor.check_rt_throttling(tmp_path)
    _assert_line(line, verdict, f"sched_rt_runtime_us = {runtime}", in_value)
    assert line.data["sched_rt_runtime_us"] == int(runtime)
    if verdict != "ok":
        assert "echo -1 | sudo tee /proc/sys/kernel/sched_rt_runtime_us" in line.fix


def test_rt_throttling_unreadable_is_skipped(tmp_path):
    _assert_line(doctor.check_rt_throttling(tmp_path), "skip", "unreadable")


def test_rt_throttling_agrees_with_this_machine():
    runtime = int(Path("/proc/sys/kernel/sched_rt_runtime_us").read_text())
    line = doctor.check_rt_throttling()
    assert line.data["sched_rt_runtime_us"] == runtime
    assert line.verdict == ("ok" if runtime < 0 else "fail" if runtime == 0 else "warn")


# ------------------------------------------------------------------------------------------- NMI watchdog
def test_nmi_watchdog(tmp_path):
    assert doctor.check_nmi_watchdog(tmp_path).verdict == "skip"
    _write(tmp_path, "sys/kernel/nmi_watchdog", "1")
    on = doctor.check_nmi_watchdog(tmp_path)
    _assert_line(on, "warn", "kernel.nmi_watchdog = 1", "non-maskable interrupt")
    assert "kernel.nmi_watchdog=0" in on.fix
    _write(tmp_path, "sys/kernel/nmi_watchdog", "0")
    _assert_line(doctor.check_nmi_watchdog(tmp_path), "ok", "kernel.nmi_watchdog = 0")


# -------------------------------------------------------------------------------- transparent huge pages
@pytest.mark.parametrize(
    ("enabled", "verdict"),
    [("[always] madvise never", "warn"), ("always [madvise] never", "ok"), ("always madvise [never]", "ok")],
)
def test_transparent_huge_pages(tmp_path, enabled, verdict):
    _write(tmp_path, "kernel/mm/transparent_hugepage/enabled", enabled)
    _write(tmp_path, "kernel/mm/transparent_hugepage/defrag", "always defer [madvise] never")
    line = doctor.check_transparent_hugepages(tmp_path)
    mode = tunables.bracketed_choice(enabled)
    _assert_line(line, verdict, f"enabled = {mode}", "defrag = madvise")
    if verdict == "warn":
        assert "transparent_hugepage=madvise" in line.fix


def test_transparent_huge_pages_absent(tmp_path):
    _assert_line(doctor.check_transparent_hugepages(tmp_path), "ok", "without THP")


# ------------------------------------------------------------------------------------------------ ASPM
@pytest.mark.parametrize(
    ("policy", "verdict"),
    [
        ("default [performance] powersave powersupersave", "ok"),
        ("[default] performance powersave powersupersave", "warn"),
        ("default performance [powersave] powersupersave", "warn"),
        ("default performance powersave [powersupersave]", "warn"),
    ],
)
def test_pcie_aspm(tmp_path, policy, verdict):
    _write(tmp_path, "module/pcie_aspm/parameters/policy", policy)
    line = doctor.check_pcie_aspm(tmp_path)
    _assert_line(line, verdict, f"pcie_aspm policy = {tunables.bracketed_choice(policy)}")
    if verdict == "warn":
        assert "pcie_aspm=off" in line.fix and "policy=performance" in line.fix


def test_pcie_aspm_absent_is_skipped(tmp_path):
    _assert_line(doctor.check_pcie_aspm(tmp_path), "skip", "absent")


# ------------------------------------------------------------------------------------------------ C-states
def _idle_state(root: Path, cpu: int, index: int, name: str, latency_us: int, disabled: bool = False) -> None:
    base = f"devices/system/cpu/cpu{cpu}/cpuidle/state{index}"
    _write(root, f"{base}/name", name)
    _write(root, f"{base}/latency", str(latency_us))
    _write(root, f"{base}/disable", "1" if disabled else "0")


def test_cstates_deep_state_enabled_warns_and_disabling_it_is_ok(tmp_path):
    _write(tmp_path, "devices/system/cpu/cpuidle/current_driver", "intel_idle")
    for cpu in (0, 1):
        _idle_state(tmp_path, cpu, 0, "POLL", 0)
        _idle_state(tmp_path, cpu, 1, "C1", 1)
        _idle_state(tmp_path, cpu, 2, "C1E", 10)
        _idle_state(tmp_path, cpu, 3, "C6", 133)
    dev = tmp_path / "dev"
    dev.mkdir()
    deep = doctor.check_cstates(tmp_path, dev)
    _assert_line(deep, "warn", "2 CPUs, driver intel_idle", "C6 133 µs", "takes 133 µs", "unreadable")
    assert deep.value.index("POLL 0 µs") < deep.value.index("C1 1 µs") < deep.value.index("C6 133 µs")
    assert "cpupower idle-set -D 10" in deep.fix and "cpu_dma_latency" in deep.fix
    assert deep.data["deepest_enabled_exit_latency_us"] == 133
    for cpu in (0, 1):
        _idle_state(tmp_path, cpu, 3, "C6", 133, disabled=True)
    _assert_line(doctor.check_cstates(tmp_path, dev), "ok", "a wake-up costs 10 µs at most")


def test_cstates_a_held_cpu_dma_latency_limit_is_ok(tmp_path):
    _idle_state(tmp_path, 0, 0, "C1", 1)
    _idle_state(tmp_path, 0, 1, "C6", 133)
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "cpu_dma_latency").write_bytes(struct.pack("<i", 0))
    held = doctor.check_cstates(tmp_path, dev)
    _assert_line(held, "ok", "cpu_dma_latency limit 0 µs", "costs 0 µs")
    (dev / "cpu_dma_latency").write_bytes(struct.pack("<i", cstates.NO_LIMIT_US))
    _assert_line(doctor.check_cstates(tmp_path, dev), "warn", "no limit held")


def test_cstates_without_cpuidle_is_skipped(tmp_path):
    _assert_line(doctor.check_cstates(tmp_path, tmp_path), "skip", "no cpuidle states")


def test_cstates_reads_this_machine():
    line = doctor.check_cstates()
    states = cstates.read_idle_states()
    if not states:
        assert line.verdict == "skip"
    else:
        assert f"{len({s.cpu for s in states})} CPUs" in line.value
        for state in states:
            if not state.disabled:
                assert f"{state.name} {state.exit_latency_us} µs" in line.value


# ---------------------------------------------------------------------------------------------- GPU driver
NVIDIA_VERSION = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024"


def test_gpu_driver_on_a_realtime_kernel_warns(tmp_path):
    _write(
        tmp_path, "modules", "nvidia_uvm 1 0 - Live 0x0\nnvidia 2 1 nvidia_uvm, Live 0x0\nigb 1 0 - Live 0x0"
    )
    _write(tmp_path, "driver/nvidia/version", NVIDIA_VERSION + "\nGCC version: gcc 12")
    rt = doctor.check_gpu_driver(True, tmp_path)
    _assert_line(rt, "warn", "nvidia, nvidia_uvm", "550.54.14", "PREEMPT_RT")
    assert rt.data["gpu_modules"] == ["nvidia", "nvidia_uvm"]
    _assert_line(doctor.check_gpu_driver(False, tmp_path), "ok", "not PREEMPT_RT")


def test_gpu_driver_without_modules(tmp_path):
    _assert_line(doctor.check_gpu_driver(True, tmp_path), "ok", "no GPU driver", "kernel without modules")
    _write(tmp_path, "modules", "igb 1 0 - Live 0x0")
    _assert_line(doctor.check_gpu_driver(True, tmp_path), "ok", "no GPU driver loaded (/proc/modules")
    assert gpu.loaded_modules(tmp_path) == ["igb"]


# ------------------------------------------------------------------------------------------ NIC interrupts
INTERRUPTS = """\
           CPU0       CPU1       CPU2       CPU3
  0:         10          0          0          0   IO-APIC   2-edge      timer
 40:          1          0          0          0   PCI-MSIX-0000:03:00.0   0-edge      enp3s0
 41:       5000          0          0        700   PCI-MSIX-0000:03:00.0   1-edge      enp3s0-TxRx-0
 42:          0       3000          0          0   PCI-MSIX-0000:03:00.0   2-edge      enp3s0-TxRx-1
 50:          3          0          0          0   PCI-MSI 1-edge      nvme0q0
 16:          7          0          0          0   IO-APIC  16-fasteoi   i801_smbus, enp3s0
 60:          9          0          0          0   PCI-MSIX-0000:04:00.0   0-edge      enp3s01-rx-0
NMI:          0          0          0          0   Non-maskable interrupts
"""


def _fake_nic(root: Path, affinity: dict[int, str]) -> None:
    _write(root, "interrupts", INTERRUPTS)
    for irq, cpus in affinity.items():
        _write(root, f"irq/{irq}/smp_affinity_list", cpus)
    for irq in (40, 41, 42):
        _write(root, f"class/net/enp3s0/device/msi_irqs/{irq}", "msix")
    _write(root, "class/net/lo/mtu", "65536")


def test_parse_interrupts():
    rows = nic.parse_interrupts(INTERRUPTS)
    assert rows[41] == ("enp3s0-TxRx-0", 5700)
    assert rows[50] == ("nvme0q0", 3)
    assert rows[16] == ("i801_smbus, enp3s0", 7)  # a shared line lists every device
    assert "NMI" not in rows and set(rows) == {0, 16, 40, 41, 42, 50, 60}
    assert nic.names_interface("i801_smbus, enp3s0", "enp3s0")
    assert nic.names_interface("enp3s0-TxRx-0", "enp3s0")
    assert not nic.names_interface("enp3s01-rx-0", "enp3s0")  # another interface


def test_nic_interrupts_on_every_cpu_warn_with_the_irqs_to_pin(tmp_path):
    _fake_nic(tmp_path, {16: "0", 40: "0-3", 41: "0-3", 42: "2"})
    assert nic.physical_interfaces(tmp_path) == ["enp3s0"]
    line = doctor.check_nic_interrupts(["enp3s0"], 3, [0, 1, 2, 3], "enp3s0", tmp_path, tmp_path)
    _assert_line(line, "warn", "IRQ 41 enp3s0-TxRx-0 -> CPU 0-3", "IRQ 42 enp3s0-TxRx-1 -> CPU 2", "2 of 4")
    assert "for n in 40 41; do echo 3 | sudo tee /proc/irq/$n/smp_affinity_list" in line.fix
    assert "irqbalance not running" in line.value and "IRQ 16 i801_smbus+enp3s0 -> CPU 0," in line.value
    assert [q["irq"] for q in line.data["interfaces"]["enp3s0"]] == [16, 40, 41, 42]  # not 60 (enp3s01)
    assert [q["count"] for q in line.data["interfaces"]["enp3s0"]] == [7, 1, 5700, 3000]
    assert "unverified" in line.data["verified"]


def test_nic_interrupts_pinned_is_ok_until_irqbalance_runs(tmp_path):
    _fake_nic(tmp_path, {16: "3", 40: "3", 41: "3", 42: "3"})
    pinned = doctor.check_nic_interrupts(["enp3s0"], 3, [0, 1, 2, 3], "enp3s0", tmp_path, tmp_path)
    _assert_line(pinned, "ok", "pinned", "irqbalance not running")
    _write(tmp_path, "4242/comm", "irqbalance")
    balanced = doctor.check_nic_interrupts(["enp3s0"], 3, [0, 1, 2, 3], "enp3s0", tmp_path, tmp_path)
    _assert_line(balanced, "warn", "irqbalance running")
    assert "systemctl disable --now irqbalance" in balanced.fix and "--banirq" in balanced.fix
    assert "smp_affinity_list" not in balanced.fix  # the affinity itself is fine


def test_nic_interrupts_without_any_is_skipped(tmp_path):
    _write(tmp_path, "interrupts", INTERRUPTS)
    line = doctor.check_nic_interrupts(["wlan0"], 1, [0, 1], "wlan0", tmp_path, tmp_path)
    _assert_line(line, "skip", "no interrupts found")


def test_robot_interfaces_follow_the_route(tmp_path):
    _fake_nic(tmp_path, {})
    assert nic.robot_interfaces({"interface": "enp3s0", "local": False}, tmp_path)[0] == ["enp3s0"]
    interfaces, why = nic.robot_interfaces({"interface": "lo", "local": True}, tmp_path)
    assert interfaces == ["enp3s0"] and "on this machine" in why
    assert "no robot address" in nic.robot_interfaces({}, tmp_path)[1]
    assert nic.target_cpu([2, 3], [0, 1, 2, 3]) == 2 and nic.target_cpu([], [0, 1]) == 1


def test_nic_interrupts_read_this_machine():
    interfaces = nic.physical_interfaces()
    line = doctor.check_nic_interrupts(interfaces, 1, [0, 1], "here")
    assert line.verdict in ("ok", "warn", "skip")
    for interface, irqs in line.data["interfaces"].items():
        for irq in irqs:
            affinity = Path(f"/proc/irq/{irq['irq']}/smp_affinity_list").read_text().strip()
            assert irq["cpus"] == doctor.parse_cpu_list(affinity), (interface, irq)


# ------------------------------------------------------------------------------------------ NIC coalescing
def _coalesce_bytes(rx_usecs: int, rx_frames: int, adaptive_rx: int) -> bytes:
    fields = [0x0E, rx_usecs, rx_frames] + [0] * 7 + [adaptive_rx] + [0] * 12
    return struct.pack("=23I", *fields)


def test_parse_coalescing():
    parsed = nic.parse_coalescing(_coalesce_bytes(3, 1, 1))
    assert parsed == nic.Coalescing(rx_usecs=3, rx_max_frames=1, adaptive_rx=True)


@pytest.mark.parametrize(
    ("coalescing", "verdict", "in_value"),
    [
        (nic.Coalescing(0, 1, False), "ok", "rx-usecs 0, rx-frames 1, adaptive-rx off"),
        (nic.Coalescing(3, 0, False), "warn", "rx-usecs 3"),
        (nic.Coalescing(0, 1, True), "warn", "adaptive-rx on"),
    ],
)
def test_nic_coalescing_rules(coalescing, verdict, in_value):
    line = doctor.check_nic_coalescing(["enp3s0"], "enp3s0", reader=lambda interface: coalescing)
    _assert_line(line, verdict, in_value)
    if verdict == "warn":
        assert line.fix == "sudo ethtool -C enp3s0 adaptive-rx off rx-usecs 0"


def test_nic_coalescing_a_driver_without_it_is_skipped_with_how_to_check():
    def unsupported(interface: str) -> nic.Coalescing:
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    line = doctor.check_nic_coalescing(["enp3s0"], "enp3s0", reader=unsupported)
    _assert_line(line, "skip", "not read (ETHTOOL_GCOALESCE: the driver reports none)")
    assert "ethtool -c enp3s0" in line.fix


def test_nic_coalescing_ioctl_agrees_with_ethtool():
    """The ioctl reader against ``ethtool -c`` on this machine's interfaces (when ethtool is installed)."""
    ethtool = shutil.which("ethtool")
    if ethtool is None:
        pytest.skip("ethtool is not installed: nothing to compare the ioctl with")
    compared = 0
    for interface in nic.physical_interfaces():
        try:
            ours = nic.read_coalescing(interface)
        except OSError:
            continue
        out = subprocess.run([ethtool, "-c", interface], capture_output=True, text=True, check=True).stdout
        fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
        assert int(fields["rx-usecs"]) == ours.rx_usecs, out
        assert int(fields["rx-frames"]) == ours.rx_max_frames, out
        assert fields["Adaptive RX"].split()[0] == ("on" if ours.adaptive_rx else "off"), out
        compared += 1
    if not compared:
        pytest.skip("no interface here answers ETHTOOL_GCOALESCE")


# -------------------------------------------------------------------------------------------- compatibility
class FakeRobot:
    """A TCP server that answers one Connect like the robot: {header, status u8, version u16}."""

    def __init__(self, status: int, version: int):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, args=(status, version), daemon=True)
        self.thread.start()

    def _serve(self, status: int, version: int) -> None:
        connection, _ = self.server.accept()
        with connection:
            self.requests.append(connection.recv(16))
            connection.sendall(struct.pack("<III", 0, 0, 15) + struct.pack("<BH", status, version))

    def close(self) -> None:
        self.thread.join(timeout=5)
        self.server.close()


@pytest.fixture
def fake_robot(monkeypatch):
    robots: list[FakeRobot] = []

    def start(status: int, version: int) -> FakeRobot:
        robot = FakeRobot(status, version)
        monkeypatch.setattr(compat, "ROBOT_COMMAND_PORT", robot.port)
        robots.append(robot)
        return robot

    monkeypatch.setattr(compat, "CLOSE_SETTLE_S", 0.0)
    yield start
    for robot in robots:
        robot.close()


def test_connect_request_and_response_bytes():
    request = compat.connect_request(udp_port=0x1234)
    assert request == struct.pack("<IIIHH", 0, 0, 16, compat.LIBFRANKA_PROTOCOL_VERSION, 0x1234)
    answer = compat.parse_connect_response(struct.pack("<III", 0, 0, 15) + struct.pack("<BH", 1, 9))
    assert answer == compat.Handshake(compatible=False, server_version=9)
    with pytest.raises(ValueError):
        compat.parse_connect_response(struct.pack("<III", 2, 0, 15) + b"\0\0\0")
    with pytest.raises(ValueError):
        compat.parse_connect_response(b"\0" * 10)


def test_compatibility_with_a_matching_robot(fake_robot):
    robot = fake_robot(0, compat.LIBFRANKA_PROTOCOL_VERSION)
    line = doctor.check_compatibility("127.0.0.1")
    _assert_line(line, "ok", "robot server version 10 (matches libfranka's)", "Python 3.")
    assert line.data["server_version"] == 10
    version, udp_port = struct.unpack("<HH", robot.requests[0][12:16])
    assert version == compat.LIBFRANKA_PROTOCOL_VERSION and udp_port > 0


def test_compatibility_with_a_robot_of_another_version_fails(fake_robot):
    fake_robot(1, 9)
    line = doctor.check_compatibility("127.0.0.1")
    _assert_line(line, "fail", "robot server version 9, libfranka speaks 10", "incompatible")
    assert "compatibility table" in line.fix


def test_compatibility_without_an_answer_fails_and_the_stream_is_skipped(monkeypatch):
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    monkeypatch.setattr(compat, "ROBOT_COMMAND_PORT", port)  # nobody listens there now
    line = doctor.check_compatibility("127.0.0.1")
    _assert_line(line, "fail", f"no Connect answer from 127.0.0.1:{port}")
    assert "FCI is activated" in line.fix
    skipped = doctor.check_state_stream("127.0.0.1", 1.0, reachable="server_version" in line.data)
    _assert_line(skipped, "skip", "did not answer the handshake")


def test_compatibility_names_the_local_versions():
    line = doctor.check_compatibility(None)
    _assert_line(line, "ok", "not asked (no --robot-ip)", "pylibfranka 0.21.3", "libfranka 0.21.3")


# --------------------------------------------------------------------------------------------- state stream
def test_stream_statistics():
    times_ms = [1, 2, 3, 6, 7]  # 4 and 5 missing
    arrivals_ns = [0, 1_000_000, 2_100_000, 5_000_000, 6_000_000]
    stats = doctor.stream_stats(times_ms, arrivals_ns, "Idle", "Idle")
    assert (stats.states, stats.lost_states, stats.longest_gap_ms) == (5, 2, 3)
    assert (stats.first_robot_time_ms, stats.last_robot_time_ms) == (1, 7)
    assert stats.interval_median_us == 1050.0 and stats.interval_max_us == 2900.0
    assert stats.jitter_p99_us == pytest.approx(100.0)  # the 3 ms step arrived 2.9 ms after the last
    assert doctor.stream_verdict(stats) == "fail"  # 2 of 7 lost
    with pytest.raises(ValueError):
        doctor.stream_stats([1], [0], "Idle", "Idle")


def _stats(lost: int = 0, gap_ms: int = 1, jitter_us: float = 50.0) -> state_stream.StreamStats:
    return state_stream.StreamStats(
        10_000, lost, gap_ms, 1000.0, jitter_us, 1200.0, "Idle", "Idle", 5, 10_000 + lost + 4
    )


def test_stream_verdicts():
    assert doctor.stream_verdict(_stats()) == "ok"
    assert doctor.stream_verdict(_stats(jitter_us=500.0)) == "warn"
    assert doctor.stream_verdict(_stats(lost=3, gap_ms=2)) == "warn"
    assert doctor.stream_verdict(_stats(lost=150, gap_ms=2)) == "fail"  # over 1 %
    assert doctor.stream_verdict(_stats(lost=19, gap_ms=20)) == "fail"  # one gap of 20 ms


def test_state_stream_line(monkeypatch):
    monkeypatch.setattr(state_stream, "read_state_stream", lambda ip, seconds: _stats(lost=3, gap_ms=4))
    line = doctor.check_state_stream("172.16.0.2", 10.0)
    _assert_line(line, "warn", "10000 states in 10 s, 3 lost", "jitter p99 50 µs", "Idle before, Idle after")
    assert line.data["lost_states"] == 3 and "franka-sim" in line.data["verified"]


def test_state_stream_skips_and_failures(monkeypatch):
    _assert_line(doctor.check_state_stream(None, 10.0), "skip", "no robot address")
    _assert_line(doctor.check_state_stream("172.16.0.2", 0.0), "skip", "--seconds 0")

    def refused(ip: str, seconds: float):
        raise RuntimeError("libfranka: Connection to FCI refused")

    monkeypatch.setattr(state_stream, "read_state_stream", refused)
    _assert_line(doctor.check_state_stream("172.16.0.2", 1.0), "fail", "Connection to FCI refused")
