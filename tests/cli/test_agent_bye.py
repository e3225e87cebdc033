"""dms-agent's `bye` (guest/tools/dms-agent, docs/agent-protocol.md), the
agent run on this host through its test transport (--port unix:PATH, which
it connects to again after each hang-up).

virtio-serial reports a port's close apart from its data, so the guest can
read the next client's request before it sees the previous client's close.
Here that order is made on purpose: the request is sent on the old
connection after its bye, then that connection is closed and the agent's
next one accepted. The command must run to its end and its exit reach the
new connection. A client that leaves without bye still hangs up its command.
No guest; a few seconds."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "guest" / "tools" / "dms-agent"


class Conn:
    """One accepted connection from the agent."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""
        sock.settimeout(10.0)

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
        self.agent = subprocess.Popen([sys.executable, str(AGENT), "--port", f"unix:{self.dir / 'port'}"],
                                      stderr=subprocess.DEVNULL)

    def tearDown(self):
        self.agent.kill()
        self.agent.wait()
        self.listener.close()
        self.tmp.cleanup()

    def accept(self) -> Conn:
        conn = Conn(self.listener.accept()[0])
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
        old.send(op="exec", id=1, argv=["sh", "-c", f"sleep 1; touch {marker}"])
        time.sleep(0.3)
        old.sock.close()
        new = self.accept()
        new.send(op="exec", id=2, argv=["sleep", "1.5"])
        self.assertEqual(new.wait("exit", 2)["status"], 0)
        self.assertFalse(os.path.exists(marker), "the command of a client that left ran on")


if __name__ == "__main__":
    unittest.main(verbosity=2)
