"""franka-sim's launcher (tools/franka_sim/sim_server.py) with a tap on the joint values of the UDP link:
what the robot receives (every command datagram's q_c and tau_J_d, after the fault injector) and what
it measures (every state datagram's q, as sent). Run by .venv-sim's Python in place of sim_server.py
(bench_franka_peers.py points franka_sim_harness.SIM_SERVER here); standard library only.

With ``--probe PATH`` the tap writes PATH + ".tap": fixed records of TAP_RECORD (t_ns of
CLOCK_MONOTONIC, kind 0 state / 1 command, message_id, then 7 doubles: q for a state, q_c for a
command, then 7 doubles: 0 for a state, tau_J_d for a command), appended by a writer thread every
10 ms. The 1 kHz paths only append the datagram's bytes to a deque.
"""

from __future__ import annotations

import collections
import struct
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools" / "franka_sim"))

TAP_RECORD = struct.Struct("<qBQ7d7d")
STATE, COMMAND = 0, 1
# libfranka's v10 RobotState (franka_sim/robot_state.py, packed, floats): message_id, six 4x4 frames,
# load and end-effector inertias (2 x 13 floats), elbow and elbow_d (4), then tau_J, tau_J_d, dtau_J, q.
_STATE_Q = struct.Struct("<7f")
_STATE_Q_AT = 8 + 6 * 16 * 4 + 2 * 13 * 4 + 4 * 4 + 3 * 7 * 4
# RobotCommand (packed, doubles): message_id, q_c, dq_c, O_T_EE_c, O_dP_EE_c, elbow_c, two flags, tau_J_d.
_COMMAND_Q = struct.Struct("<7d")
_COMMAND_Q_AT = 8
_COMMAND_TAU_AT = 8 + (7 + 7 + 16 + 6 + 2) * 8 + 2
_ZEROS = (0.0,) * 7
FLUSH_S = 0.01


class Tap:
    """The deque the socket proxy appends to and the thread that writes it out."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.queue: collections.deque = collections.deque()
        self.stop = threading.Event()
        path.write_bytes(b"")
        self.thread = threading.Thread(target=self._write, name="peer-tap-writer", daemon=True)
        self.thread.start()

    def _drain(self, out) -> None:
        while self.queue:
            t_ns, kind, data = self.queue.popleft()
            message_id = int.from_bytes(data[:8], "little")
            if kind == STATE:
                if len(data) < _STATE_Q_AT + _STATE_Q.size:
                    continue
                a, b = _STATE_Q.unpack_from(data, _STATE_Q_AT), _ZEROS
            else:
                if len(data) < _COMMAND_TAU_AT + _COMMAND_Q.size:
                    continue
                a = _COMMAND_Q.unpack_from(data, _COMMAND_Q_AT)
                b = _COMMAND_Q.unpack_from(data, _COMMAND_TAU_AT)
            out.write(TAP_RECORD.pack(t_ns, kind, message_id, *a, *b))

    def _write(self) -> None:
        with open(self.path, "ab") as out:
            while not self.stop.wait(FLUSH_S):
                self._drain(out)
                out.flush()
            self._drain(out)


def install(tap: Tap) -> None:
    """Wraps the probe's socket proxy: states as sent, commands as franka-sim's receiver takes them."""
    import sim_probed_server

    proxy = sim_probed_server.ProbedUdpSocket
    sendto, recvfrom = proxy.sendto, proxy.recvfrom

    def tapped_sendto(self, data: bytes, address):
        tap.queue.append((time.monotonic_ns(), STATE, bytes(data)))
        return sendto(self, data, address)

    def tapped_recvfrom(self, bufsize: int, flags: int = 0):
        data, address = recvfrom(self, bufsize, flags)
        tap.queue.append((time.monotonic_ns(), COMMAND, bytes(data)))
        return data, address

    proxy.sendto, proxy.recvfrom = tapped_sendto, tapped_recvfrom


def main() -> int:
    import sim_server

    argv = sys.argv[1:]
    tap = None
    if "--probe" in argv:
        tap = Tap(Path(argv[argv.index("--probe") + 1] + ".tap"))
        install(tap)
    try:
        return sim_server.main(argv)
    finally:
        if tap is not None:
            tap.stop.set()
            tap.thread.join(2.0)


if __name__ == "__main__":
    sys.exit(main())
