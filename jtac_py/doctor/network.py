"""The "robot route" line: ``ip route get`` to the robot's literal address, the link's MTU, speed, state."""

from __future__ import annotations

import dataclasses
import ipaddress
import itertools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jtac_py.doctor.report import Check
from jtac_py.doctor.sysfs import read_small_file

EXPECTED_MTU = 1500
_IP_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Route:
    """What ``ip route get`` says about one destination."""

    destination: str
    interface: str
    source: str | None
    gateway: str | None  # None: a direct link
    local: bool  # an address of this machine (served by the loopback interface)


def robot_address(text: str) -> str:
    """The robot's address as a literal IPv4/IPv6 address (ValueError otherwise: no name lookups)."""
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        raise ValueError(
            f"{text!r} is not an IP address (give the robot's address, e.g. 172.16.0.2)"
        ) from None


def parse_route_get(destination: str, output: str) -> Route:
    """The first route of ``ip route get`` output (ValueError if it names no interface)."""
    tokens = output.split()
    values: dict[str, str] = {}
    for key, value in itertools.pairwise(tokens):
        if key in ("dev", "src", "via") and key not in values:
            values[key] = value
    if "dev" not in values:
        raise ValueError(f"no interface in 'ip route get {destination}': {output.strip()!r}")
    return Route(
        destination=destination,
        interface=values["dev"],
        source=values.get("src"),
        gateway=values.get("via"),
        local=(bool(tokens) and tokens[0] == "local") or values["dev"] == "lo",
    )


def _route_get(destination: str) -> Route:
    """Runs ``ip route get``: a routing-table lookup, nothing is sent."""
    ip = shutil.which("ip") or next((p for p in ("/usr/sbin/ip", "/sbin/ip") if os.access(p, os.X_OK)), None)
    if ip is None:
        raise FileNotFoundError("the ip command (iproute2) is not installed")
    result = subprocess.run(
        [ip, "route", "get", destination],
        capture_output=True,
        text=True,
        timeout=_IP_TIMEOUT_S,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError((result.stderr or result.stdout).strip() or f"exit status {result.returncode}")
    return parse_route_get(destination, result.stdout)


def check_route(robot_ip: str | None, sys_root: Path = Path("/sys")) -> Check:
    """The route to the robot and the link it leaves by (no packet is sent)."""
    name = "robot route"
    if robot_ip is None:
        return Check(
            name,
            "not checked: no robot address given",
            "skip",
            "jtac doctor --robot-ip <the robot's address, e.g. 172.16.0.2>",
        )
    address = robot_address(robot_ip)
    try:
        route = _route_get(address)
    except FileNotFoundError as exc:
        return Check(name, str(exc), "warn", "sudo apt install iproute2")
    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
        return Check(
            name,
            f"no route to {address}: {exc}",
            "fail",
            "give a dedicated network interface an address in the robot's subnet, e.g. "
            "sudo ip addr add 172.16.0.1/24 dev <interface> (robot at 172.16.0.2)",
        )
    link = _link(route.interface, sys_root)
    value = f"{address}: " + _route_text(route, link)
    data = dataclasses.asdict(route) | link
    return _judge_route(name, route, link, value, data)


def _link(interface: str, sys_root: Path) -> dict[str, Any]:
    """MTU, speed [Mb/s] and operstate of an interface from /sys/class/net (None where unknown)."""
    net = sys_root / "class" / "net" / interface
    mtu_text = read_small_file(net / "mtu")
    mtu = int(mtu_text) if mtu_text and mtu_text.isdigit() else None
    speed_text = read_small_file(net / "speed")  # EINVAL on loopback and links without a speed
    speed_mb_s = int(speed_text) if speed_text and speed_text.lstrip("-").isdigit() else None
    if speed_mb_s is not None and speed_mb_s <= 0:
        speed_mb_s = None
    return {"mtu": mtu, "speed_mb_s": speed_mb_s, "operstate": read_small_file(net / "operstate")}


def _route_text(route: Route, link: dict[str, Any]) -> str:
    mtu, speed_mb_s, state = link["mtu"], link["speed_mb_s"], link["operstate"]
    parts = [f"via {route.gateway} (routed)" if route.gateway else "direct link", f"dev {route.interface}"]
    if route.source:
        parts.append(f"src {route.source}")
    parts.append(f"MTU {mtu if mtu is not None else 'unknown'}")
    parts.append(f"speed {speed_mb_s} Mb/s" if speed_mb_s is not None else "speed unknown")
    if state:
        parts.append(f"state {state}")
    return ", ".join(parts)


def _judge_route(name: str, route: Route, link: dict[str, Any], value: str, data: dict[str, Any]) -> Check:
    """The verdict: loopback ok; a link down fails; a gateway, a wrong MTU or a slow link warn."""
    if route.local:
        value += " (loopback: an address of this machine, e.g. franka-sim; not a robot link)"
        return Check(name, value, "ok", "", data)
    if link["operstate"] == "down":
        return Check(
            name,
            value,
            "fail",
            f"plug the robot's cable in, or: sudo ip link set dev {route.interface} up",
            data,
        )
    if route.gateway:
        # The interface found leads to the gateway, not to the robot: its MTU and speed say nothing.
        return Check(
            name,
            value + "; routed through a gateway; Franka wants a direct connection",
            "warn",
            "connect the robot's control box directly to a dedicated interface and put both on one subnet, "
            "e.g. sudo ip addr add 172.16.0.1/24 dev <interface> (robot at 172.16.0.2)",
            data,
        )
    problems, fixes = [], []
    mtu, speed_mb_s = link["mtu"], link["speed_mb_s"]
    if mtu is not None and mtu != EXPECTED_MTU:
        problems.append(f"MTU {mtu}, {EXPECTED_MTU} expected")
        fixes.append(f"sudo ip link set dev {route.interface} mtu {EXPECTED_MTU}")
    if speed_mb_s is not None and speed_mb_s < 100:
        problems.append("slower than 100 Mb/s")
        fixes.append("a 100 Mb/s or 1 Gb/s port and cable")
    if problems:
        return Check(name, value + "; " + "; ".join(problems), "warn", "; ".join(fixes), data)
    return Check(name, value, "ok", "", data)
