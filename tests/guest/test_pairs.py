"""Two nodes of two NIC/GPU pairs each (configs/node/two-pairs.toml: each
pair under a PCIe switch of its own). In the guest both NICs and both GPUs
bind, in pair order, each pair's NIC and GPU under one switch; and a devmem
transfer over pair 1 (node0's GPU 1 -> NIC 1 -> data link 1 -> node1's
NIC 1 -> GPU 1), checked by the GPUs' CRC engines, keeps its payload below
switch sw1 on both nodes (about 2 min under TCG)."""

from pathlib import Path

from guestlib import TwoNodes, kernel_complaints, main
from devmemsim import addressing
from devmemsim.cluster import Cluster
from devmemsim.transfer import transfer

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "node" / "two-pairs.toml"
LINK1 = addressing.data_link(1)
MiB = 1 << 20
NBYTES = 8 * MiB

# "@count NICS GPUS" bound; then per NIC i in PCI order "@pair i IFNAME MAC
# NIC-PATH GPU-PATH" with /dev/dmsgpuI's path (sysfs device paths).
PROBE = r"""
nics=$(ls -d /sys/bus/pci/drivers/dmsnic/0000:* | wc -l)
gpus=$(ls -d /sys/bus/pci/drivers/dmsgpu/0000:* | wc -l)
echo "@count $nics $gpus"
i=0
for net in /sys/bus/pci/drivers/dmsnic/0000:*/net/*; do
  ifname=${net##*/}
  echo "@pair $i $ifname $(cat /sys/class/net/$ifname/address)" \
    "$(readlink -f /sys/class/net/$ifname/device)" \
    "$(readlink -f /sys/class/misc/dmsgpu$i/device)"
  i=$((i + 1))
done
"""


def mac_ifname(mac: str) -> str:
    """Shell: the interface that has this MAC address."""
    return f"$(grep -l '^{mac}$' /sys/class/net/*/address | cut -d/ -f5)"


class TwoPairs(TwoNodes):
    NAME = "pairs"
    BOOT_ARGS = ("--config", str(CONFIG))

    @classmethod
    def setup_nodes(cls):
        # The guest init gave NIC 1 its data link 1 addresses
        # (addressing.data_link, on the kernel command line).
        for n in (0, 1):
            ifname = mac_ifname(LINK1.mac(n))
            cls.sh(n, f"IF={ifname} && ip -4 addr show dev $IF | grep -q ' {LINK1.cidr(n)} ' && "
                      f"ip -6 addr show dev $IF | grep -q ' {LINK1.cidr6(n)} ' && ip link set $IF mtu 9000 up")

    def probe(self, node: int) -> dict:
        out = {}
        for line in self.sh(node, PROBE).splitlines():
            words = line.split()
            if words and words[0] == "@count":
                out["count"] = (int(words[1]), int(words[2]))
            elif words and words[0] == "@pair":
                out[int(words[1])] = words[2:]
        return out

    def test_both_pairs_bind_in_pair_order_under_their_switches(self):
        for n in (0, 1):
            p = self.probe(n)
            self.assertEqual(p["count"], (2, 2), p)
            switches = set()
            for i in (0, 1):
                ifname, mac, nic_path, gpu_path = p[i]
                self.assertEqual(mac, addressing.data_link(i).mac(n), p)
                # .../root port/upstream port/downstream port/device
                nic_switch = nic_path.rsplit("/", 2)[0]
                self.assertEqual(nic_switch, gpu_path.rsplit("/", 2)[0], p)
                switches.add(nic_switch)
            self.assertEqual(len(switches), 2, p)

    def test_ping_over_pair_1(self):
        self.sh(0, f"ping -c 3 -W 5 {LINK1.addr(1)}")

    def test_devmem_transfer_over_pair_1(self):
        cl = Cluster(self.NAME)
        self.sh(0, "ping -c 1 -W 10 " + LINK1.addr(1))
        tx, rx = transfer(cl, "devmem", NBYTES, pair=1)
        for run in (tx, rx):
            self.assertTrue(run["verified"], run)
            self.assertEqual(run["payload_bytes"], NBYTES, run)
            self.assertEqual(run["dma_faults"], 0, run)
            # Pair 1's links carried the payload (transfer() reads them)...
            self.assertGreaterEqual(run["nic_link_bytes"], NBYTES, run)
            self.assertGreaterEqual(run["gpu_link_bytes"], NBYTES, run)
            self.assertLess(run["root_complex_bytes"], 0.10 * NBYTES, run)
        for node in ("node0", "node1"):
            st = cl.stats(node)
            links = st["pcie"]["links"]
            switches = st["pcie"]["switches"]
            # ... below switch sw1, and pair 0 stayed out of it.
            self.assertGreaterEqual(switches["sw1"]["p2p_bytes"], NBYTES, switches)
            self.assertEqual(switches["sw0"]["p2p_bytes"], 0, switches)
            for idle in ("nic0", "gpu0"):
                self.assertLess(sum(links[idle][d]["payload_bytes"] for d in ("up", "down")),
                                0.01 * NBYTES, (idle, links[idle]))
        for n in (0, 1):
            self.assertEqual(kernel_complaints(self.NAME, n), [])


if __name__ == "__main__":
    main()
