"""Fault injection between two nodes: the drivers survive what the model
injects, and transfers still deliver every byte.

Wire: both nodes boot with frame loss and corruption in both directions
([faults] keys through `boot --set`); TCP through host memory (bounce) and
devmem TCP into GPU memory deliver every byte (the GPUs' CRC32C on both
sides), corrupted frames are counted by the model and caught by the
receiving NIC's checksum (ethtool -S csum_bad).

At run time (the devmemsim-node object's `faults` property over QMP): the
link flapping under a transfer, MSIs delivered late, NIC DMA errors reported
by the driver with traffic flowing again once they stop, NIC ring DMA faults
(the device stops the ring) recovered by dmsnic restarting the queue pair
under a transfer, GPU engine errors and lost GPU interrupts reported or
survived by dmsgpu.

Every test ends with both nodes clean: no page pool or dma-buf binding left,
every dmsgpu buffer back, nothing in dmesg that KERNEL_COMPLAINTS names.
"""

import os
import time

from guestlib import FaultNodes, complaints, main, run

MiB = 1 << 20

# On both nodes from boot: 0.5 % of frames lost and 0.5 % corrupted, each
# way (about 2 % of a TCP stream's segments, ACKs included, hit).
WIRE_FAULTS = {"seed": 7, "rx_drop_rate": 0.005, "rx_corrupt_rate": 0.005,
               "tx_drop_rate": 0.005, "tx_corrupt_rate": 0.005}


class Faults(FaultNodes):
    NAME = f"faults-test-{os.getpid()}"
    BOOT_ARGS = tuple(arg for key, value in WIRE_FAULTS.items()
                      for arg in ("--set", f"faults.{key}={value}"))

    def tearDown(self):
        # Back to the boot-time wire faults, whatever a test set.
        for node in (0, 1):
            self.set_faults(node, " ".join(f"{k}={v}" for k, v in WIRE_FAULTS.items()))

    def assert_clean(self, node):
        """No page pool outlived its queue, no dma-buf is still bound, every
        dmsgpu buffer is back, and the kernel complained about nothing (see
        test_devmem.BadInput.assert_clean for the loopback pings)."""
        flush = ("for c in $(seq 0 $(($(nproc) - 1))); do "
                 "taskset -c $c ping -q -c 1 -W 1 127.0.0.1 >/dev/null || exit 1; done")
        deadline = time.monotonic() + 10
        while True:
            self.sh(node, flush)
            pools = self.tool(node, "pools")[1]["pools"]
            stale = [p for p in pools if "detach_time" in p or "dmabuf" in p]
            buffers = int(self.sh(node, "cat /sys/class/misc/dmsgpu0/buffers"))
            if (not stale and buffers == 0) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        self.assertEqual(stale, [], pools)
        self.assertEqual(buffers, 0)
        self.assertEqual(complaints(self.new_dmesg(node)), [])

    def assert_both_clean(self):
        self.assert_clean(0)
        self.assert_clean(1)

    # ------------------------------------------------------------ tests

    def test_wire_loss_and_corruption(self):
        before = [self.faults(n) for n in (0, 1)]
        csum_bad = self.ethtool(1, "csum_bad")
        self.transfer(5400, 16 * MiB, mode="bounce")
        self.transfer(5401, 16 * MiB)
        after = [self.faults(n) for n in (0, 1)]
        hit = {k: sum(a[k] - b[k] for a, b in zip(after, before))
               for k in ("rx_dropped", "rx_corrupted", "tx_dropped", "tx_corrupted")}
        for key, count in hit.items():
            self.assertGreater(count, 0, (key, hit))
        # Frames corrupted on their way into node1 (its RX, node0's TX) are
        # caught by node1's checksum offload.
        self.assertGreater(self.ethtool(1, "csum_bad"), csum_bad)
        self.assert_both_clean()

    def carrier_downs(self, node):
        return int(self.sh(node, "cat /sys/class/net/eth1/carrier_down_count"))

    def test_link_flaps_under_a_transfer(self):
        downs = self.faults(1)["link_downs"]
        carrier_downs = self.carrier_downs(1)
        # Down 300 ms of every 1.5 s of simulated time, from 200 ms on.
        self.set_faults(1, "link_down_after_ns=200000000 link_down_ns=300000000 "
                           "link_flap_period_ns=1500000000")
        self.transfer(5410, 16 * MiB)
        self.assertGreater(self.faults(1)["link_downs"], downs)
        # dmsnic saw the link go (carrier off) through the admin interrupt.
        self.assertGreater(self.carrier_downs(1), carrier_downs)
        self.set_faults(1, "")
        self.sh(1, "for i in $(seq 50); do [ $(cat /sys/class/net/eth1/carrier) = 1 ] && exit 0; "
                   "sleep 0.1; done; exit 1")
        self.assert_both_clean()

    def test_late_interrupts(self):
        for node in (0, 1):
            self.set_faults(node, "nic_msi_delay_rate=0.2 msi_delay_ns=2000000")
        self.transfer(5420, 8 * MiB)
        self.assertGreater(self.faults(1)["msi_delayed"], 0)
        self.assert_both_clean()

    def test_nic_dma_errors_reported_and_recovered(self):
        rx_err = self.ethtool(1, "hw_rx_dma_err")
        # Frame data only (ring faults: test_nic_ring_dma_faults_restart_queues).
        self.set_faults(1, "seed=3 nic_dma_error_rate=0.005 nic_dma_error_rings=false")
        self.transfer(5430, 8 * MiB, mode="bounce", timeout=180)
        injected = self.faults(1)["nic_dma_errors"]
        self.set_faults(1, "")
        self.assertGreater(injected, 0)
        # The driver reports what the device reported: errored RX frames,
        # errored TX completions, or descriptor faults.
        reported = (self.ethtool(1, "hw_rx_dma_err") - rx_err + self.ethtool(1, "hw_tx_dma_err")
                    + self.ethtool(1, "hw_ring_err"))
        self.assertGreater(reported, 0)
        # Traffic flows again, devmem included.
        self.transfer(5431, 8 * MiB)
        self.assert_both_clean()

    def test_nic_ring_dma_faults_restart_queues(self):
        restarts = [self.ethtool(n, "fault_restarts") for n in (0, 1)]
        ring_faults = [self.ethtool(n, "hw_ring_dma_err") for n in (0, 1)]
        # Descriptor and completion ring accesses fail too: each such fault
        # stops that ring (no completion for the faulted work) and only a
        # restart of its queue pair lets the transfer go on.
        for node in (0, 1):
            self.set_faults(node, f"seed={11 + node} nic_dma_error_rate=0.0005 "
                                  "nic_dma_error_rings=true")
        self.transfer(5440, 8 * MiB, mode="bounce", timeout=240)
        self.transfer(5441, 8 * MiB, timeout=240)
        for node in (0, 1):
            self.set_faults(node, "")
        faulted = [self.ethtool(n, "hw_ring_dma_err") - ring_faults[n] for n in (0, 1)]
        restarted = [self.ethtool(n, "fault_restarts") - restarts[n] for n in (0, 1)]
        self.assertGreater(sum(faulted), 0, faulted)
        # One restart per stopped pair (both rings of a pair may stop first).
        for node in (0, 1):
            self.assertGreaterEqual(faulted[node], restarted[node], (faulted, restarted))
            self.assertEqual(restarted[node] > 0, faulted[node] > 0, (faulted, restarted))
            dmesg = self.new_dmesg(node)
            self.assertNotIn("stays down", dmesg)
            self.assertEqual(dmesg.count("restarted after a ring DMA fault") > 0,
                             restarted[node] > 0, dmesg)
        # Every pair runs again: a transfer on fresh connections.
        self.transfer(5442, 4 * MiB)
        self.assert_both_clean()

    def test_gpu_engine_errors_and_lost_interrupts(self):
        selftest = "/opt/devmemsim/bin/dms-gpu selftest --size 1M"
        self.set_faults(1, "gpu_engine_error_rate=1")
        res = run(self.NAME, 1, selftest)
        self.assertNotEqual(res.returncode, 0, res.stdout)
        self.assertIn("engine error 5", self.new_dmesg(1))
        self.assertGreater(self.faults(1)["gpu_engine_errors"], 0)
        # Every GPU interrupt lost: dmsgpu still sees its jobs finish.
        self.set_faults(1, "gpu_msi_drop_rate=1")
        self.sh(1, selftest)
        self.assertGreater(self.faults(1)["msi_dropped"], 0)
        self.set_faults(1, "")
        self.sh(1, selftest)
        # dmsgpu logs these two on purpose; they are not complaints.
        self.assertIn("finished without an interrupt", self.new_dmesg(1))
        self.assert_clean(1)


if __name__ == "__main__":
    main()
