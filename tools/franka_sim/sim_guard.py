"""The franka-sim server process's network guard: an audit hook that keeps it on loopback.

Installed by sim_server.py before franka-sim is imported. It refuses (with an exception, at once, instead
of a hang on a machine without internet) every socket address outside the loopback range, every name
lookup of a non-loopback host, any subprocess (robot_descriptions clones models with git) and the import
of robot_descriptions itself: franka-sim must take its model from FR3_MJCF. Standard library only.
"""

from __future__ import annotations

import ipaddress

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


class NetworkRefusedError(RuntimeError):
    """Raised by the audit hook for anything that could leave the machine."""


def _is_loopback_host(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


_SOCKET_ADDRESS_EVENTS = {"socket.bind", "socket.connect", "socket.sendto"}
_PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"}


def audit(event: str, args: tuple) -> None:
    """sys.addaudithook hook: keep this process on loopback and away from robot_descriptions."""
    if event in _SOCKET_ADDRESS_EVENTS:
        address = args[1]
        # AF_INET / AF_INET6 addresses are tuples whose first item is the host; AF_UNIX is a path.
        if isinstance(address, tuple) and not _is_loopback_host(address[0]):
            raise NetworkRefusedError(f"{event} to {address!r} refused: franka-sim stays on loopback")
    elif event == "socket.getaddrinfo":
        if args[0] is not None and not _is_loopback_host(args[0]):
            raise NetworkRefusedError(f"name lookup of {args[0]!r} refused: franka-sim stays on loopback")
    elif event == "import":
        if args[0] == "robot_descriptions" or args[0].startswith("robot_descriptions."):
            raise NetworkRefusedError(
                "import of robot_descriptions refused: it downloads models; set FR3_MJCF to a local MJCF"
            )
    elif event in _PROCESS_EVENTS:
        raise NetworkRefusedError(f"{event} refused: the franka-sim server starts no processes")
