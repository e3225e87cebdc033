"""Nodes on other hosts (remote.py) without a guest or sshd: an "ssh" that
runs its command here (DEVMEMSIM_SSH) stands for the host. Checks: the
forwarding session's command ends QEMU when the session ends; stop's
kmemleak check reads a remote node's console on its host; stop fetches a
remote node's pcaps into the pcap directory here. Seconds."""

import json
import os
import signal
import subprocess
import time
import unittest
from pathlib import Path
from unittest import mock

from clilib import FileCase
from devmemsim import cluster, remote

# ssh OPTIONS -- HOST COMMAND...: COMMAND, here.
FAKE_SSH = """#!/bin/sh
while [ "$1" != "--" ]; do shift; done
shift 2
exec sh -c "$*"
"""


class RemoteNode(FileCase):
    def setUp(self):
        super().setUp()
        self.tmp = Path(self.dir.name)
        ssh = self.tmp / "ssh"
        ssh.write_text(FAKE_SSH)
        ssh.chmod(0o755)
        env = mock.patch.dict(os.environ, {"DEVMEMSIM_SSH": str(ssh), "DEVMEMSIM_RUNDIR": str(self.tmp / "run")})
        env.start()
        self.addCleanup(env.stop)
        self.cl = cluster.Cluster("c")
        self.there = remote.RemoteNode(self.cl.dir, "hb", "host-b")
        self.there.dir.mkdir(parents=True)

    def record(self, pcap: str = "") -> None:
        (self.cl.dir / "hb.remote").write_text(json.dumps({"host": "host-b", "dir": str(self.there.dir),
                                                           "pid": 1, "pcap": pcap}))

    def test_session_end_ends_qemu(self):
        """The forwarding session's command (its parent: sshd) ends QEMU
        when its parent goes, as when the ssh here is killed."""
        qemu = subprocess.Popen(["sleep", "600"], start_new_session=True)
        self.addCleanup(qemu.kill)
        watch = remote.WATCH.format(q=qemu.pid)
        sshd = subprocess.Popen(["sh", "-c", 'sh -c "$W" & wait'], env={**os.environ, "W": watch})
        time.sleep(1.5)
        self.assertIsNone(qemu.poll())  # the session lasts: so does QEMU
        sshd.send_signal(signal.SIGKILL)
        sshd.wait()
        started = time.monotonic()
        self.assertEqual(qemu.wait(timeout=15), -signal.SIGTERM)
        self.assertLess(time.monotonic() - started, 5)

    def test_watch_ends_with_qemu(self):
        qemu = subprocess.Popen(["sleep", "1"], start_new_session=True)
        watch = subprocess.Popen(["sh", "-c", remote.WATCH.format(q=qemu.pid)])
        qemu.wait()
        self.assertEqual(watch.wait(timeout=10), 0)

    def test_kmemleak_seen_on_the_nodes_host(self):
        """stop scans kmemleak on a remote node whose console (there) says
        its kernel has it, as on a local node."""
        self.record()
        console = self.there.dir / "hb.console"
        console.write_text("[    0.1] booting\n")
        self.assertFalse(self.cl._has_kmemleak("hb"))
        console.write_text(f"[    0.1] booting\n[    2.0] {cluster.KMEMLEAK_BANNER}\n")
        self.assertTrue(self.cl._has_kmemleak("hb"))

    def test_fetch_brings_the_pcaps_here(self):
        here = self.tmp / "pcaps"
        here.mkdir()
        self.record(str(here))
        there = remote.RemoteNode.recorded(self.cl.dir, "hb")
        there.pcap_dir.mkdir()
        (there.pcap_dir / "hb-span.pcap").write_bytes(b"\xd4\xc3\xb2\xa1frames")
        (self.there.dir / "hb.console").write_text("console\n")
        there.fetch()
        self.assertEqual(sorted(p.name for p in here.iterdir()), ["hb-span.pcap"])
        self.assertEqual((here / "hb-span.pcap").read_bytes(), b"\xd4\xc3\xb2\xa1frames")
        self.assertEqual((self.cl.dir / "hb.console").read_text(), "console\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
