"""dms-agent's `bye` (guest/tools/dms-agent, docs/agent-protocol.md), the
agent run on this host through its test transport (--port unix:PATH, which
it connects to again after each hang-up).

virtio-serial reports a port's close apart from its data, so the guest can
read the next client's request before it sees the previous client's close.
Here that order is made on purpose: the request is sent on the old
connection after its bye, then that connection is closed and the agent's
next one accepted. The command must run to its end and its exit reach the
new connection. A client that leaves without bye still hangs up its command.
The agent runs with SIGHUP and SIGINT ignored, as under nohup or as a
background job of a script: its commands must still start with them at
their defaults. No guest; a few seconds."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "guest" / "tools" / "dms-agent"


def ignore_hup_and_int():
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Conn:
    """One accepted connection from the agent."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""
        sock.settimeout(20.0)

    def send(self, **msg):
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def wait(self, op, mid):
        """The message op about request mid (others are skipped)."""
        while True:
            while b"\n" not in self.buf:
                data = self.sock.recv(65536)
                if not data:
                    raise AssertionError(f"the agent closed before {op} of {mid}")
                self.buf += data
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if msg.get("op") == op and msg.get("id") == mid:
                return msg


class Bye(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="dms-agent-")
        self.dir = Path(self.tmp.name)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.dir / "port"))
        self.listener.listen(1)
        self.listener.settimeout(10.0)
        self.conns = []
        self.agent = subprocess.Popen([sys.executable, str(AGENT), "--port", f"unix:{self.dir / 'port'}"],
                                      stderr=subprocess.DEVNULL, preexec_fn=ignore_hup_and_int)

    def tearDown(self):
        for conn in self.conns:
            conn.sock.close()
        self.agent.kill()
        self.agent.wait()
        self.listener.close()
        self.tmp.cleanup()

    def accept(self) -> Conn:
        conn = Conn(self.listener.accept()[0])
        self.conns.append(conn)
        conn.send(op="hello", id=f"hello-{time.monotonic()}")
        return conn

    def test_hang_up_after_bye_spares_the_next_clients_command(self):
        old = self.accept()
        old.send(op="bye", id=1)
        old.wait("bye", 1)
        # The next client's request, read before the old client's close shows.
        old.send(op="exec", id=2, argv=["sh", "-c", "sleep 1; echo done"])
        time.sleep(0.3)
        old.sock.close()
        new = self.accept()
        self.assertEqual(new.wait("exit", 2)["status"], 0)

    def test_hang_up_without_bye_hangs_up_the_command(self):
        old = self.accept()
        marker = self.dir / "survived"
        old.send(op="exec", id=1, argv=["sh", "-c", f"sleep 5; touch {marker}"])
        time.sleep(0.3)
        old.sock.close()
        new = self.accept()
        # Execs run one at a time, so this one ends after the old command:
        # at once if the hang-up ended it, in 5 s with the marker if not.
        # (The 5 s leave a loaded host's agent time to see the hang-up.)
        new.send(op="exec", id=2, argv=["true"])
        self.assertEqual(new.wait("exit", 2)["status"], 0)
        self.assertFalse(os.path.exists(marker), "the command of a client that left ran on")

    def test_kill_int_ends_the_command(self):
        conn = self.accept()
        conn.send(op="exec", id=1, argv=["sleep", "30"])
        time.sleep(0.3)
        conn.send(op="kill", id=1, signal="INT")
        self.assertEqual(conn.wait("exit", 1)["status"], 128 + signal.SIGINT)


if __name__ == "__main__":
    unittest.main(verbosity=2)
