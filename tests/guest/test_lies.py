"""A device that lies (faults.nic_lie_*_rate, faults.gpu_lie_status_rate;
datasheet "A device that lies") between two nodes: the drivers treat the
devices as untrusted.

Each NIC lie in turn, set at run time on the receiver (node1) over QMP:
a transfer node0 -> node1 through host memory (PACK queues, hardware GRO
on) still delivers every byte (CRC32C on both GPUs; TCP resends what the
driver dropped), the model counts the lies, dmsnic counts what it caught
(rxN_bad_cmpl, rxN_hw_gro_bad) and restarts the queue pair where a
completion named a buffer the ring does not hold (qN_fault_restarts), and
the kernel complains about nothing but dmsnic's own "bad completion"
lines. GPU status lies fail dmsgpu's jobs with EIO, and jobs succeed again
once the lies stop.
"""

import os

from guestlib import FaultNodes, complaints, main, run

MiB = 1 << 20
# dmsnic's rate-limited report of each lie it catches: expected here.
EXPECTED = ("bad completion", "bad zero-copy completion")


class Lies(FaultNodes):
    NAME = f"lies-test-{os.getpid()}"

    def tearDown(self):
        for node in (0, 1):
            self.set_faults(node, "")

    def transfer(self, port, nbytes=4 * MiB):
        """Through host memory (bounce): the NIC's lies, not the GPU's."""
        return super().transfer(port, nbytes, mode="bounce")

    def assert_quiet(self, node):
        """Nothing in dmesg that KERNEL_COMPLAINTS names, but the lies' reports."""
        found = [line for line in complaints(self.new_dmesg(node))
                 if not any(e in line for e in EXPECTED)]
        self.assertEqual(found, [])

    def lie(self, key, port, rate, caught=None, restarts=False):
        """Transfer under one lie on node1; the counters it should move."""
        before = {s: self.ethtool(1, s) for s in ("bad_cmpl", "hw_gro_bad", "fault_restarts")}
        lies = self.faults(1)[key]
        self.set_faults(1, f"seed=5 {key}_rate={rate}")
        self.transfer(port)
        self.set_faults(1, "")
        after = {s: self.ethtool(1, s) for s in before}
        self.assertGreater(self.faults(1)[key], lies)
        if caught:
            self.assertGreater(after[caught], before[caught], (before, after))
        if restarts:
            self.assertGreater(after["fault_restarts"], before["fault_restarts"], (before, after))
            self.assertIn("restarted after a bad RX completion", self.new_dmesg(1))
        self.assertNotIn("stays down", self.new_dmesg(1))
        # Every pair runs again.
        self.transfer(port + 1, 1 * MiB)
        self.assert_quiet(0)
        self.assert_quiet(1)

    def test_length_beyond_the_buffer(self):
        self.lie("nic_lie_len", 5500, 0.05, caught="bad_cmpl")

    def test_id_never_posted(self):
        self.lie("nic_lie_id", 5510, 0.05, caught="bad_cmpl", restarts=True)

    def test_completion_written_twice(self):
        self.lie("nic_lie_dup", 5520, 0.05, caught="bad_cmpl", restarts=True)

    def test_absurd_gro_metadata(self):
        self.lie("nic_lie_gro", 5530, 0.05, caught="hw_gro_bad")

    def test_pack_pieces_contradict_offsets(self):
        # A piece without PBUF_DONE that reaches its buffer's end leaves the
        # buffer in the ring until a piece names the next one (the device
        # moved on): only the overlong pieces are caught.
        self.lie("nic_lie_pack", 5540, 0.05)

    def test_gpu_status_lies(self):
        selftest = "/opt/devmemsim/bin/dms-gpu selftest --size 1M"
        self.set_faults(1, "gpu_lie_status_rate=1")
        res = run(self.NAME, 1, selftest)
        self.assertNotEqual(res.returncode, 0, res.stdout)
        dmesg = self.new_dmesg(1)
        self.assertTrue("(unknown)" in dmesg or "copy engine moved 0 of" in dmesg, dmesg)
        self.assertGreater(self.faults(1)["gpu_lie_status"], 0)
        self.set_faults(1, "")
        self.sh(1, selftest)
        self.assert_quiet(1)


if __name__ == "__main__":
    main()
