"""The cluster's address plan, defined once.

Nodes are named node0..nodeN-1 (a cluster file may name them; node i is
still the i-th). Each pair of nodes is linked by devmemsim-nic (the data
link) and, for benchmarks, by e1000e and virtio-net; node i has on each link
the MAC 52:54:00:XX:00:ii (XX names the link) and the IPv4 address
NET.(i+1)/24; the data link also carries IPv6, node i at NET6:(i+1)/64 (a
unique local prefix). The CLI puts node i's data-link addresses on its kernel
command line and devmemsim-init applies them; the tests and the benchmark
ask this module.

A node with K NIC/GPU pairs (its [topology]) has K data NICs. In the
default cluster every node's NIC i is on data link i (data_link(i)). Link 0
is the one above; link i > 0 has the netdev dataI, MACs 52:54:00:d5:II:nn
and 10.10.i.(n+1)/24, fd10:10:i::(n+1)/64.

A cluster file (clusterfile.py) names its data networks; network j (in the
file's order) is the subnet of data_link(j), and node n's NIC on it has
address n+1 there: nic_address(n, pair, j). A NIC's MAC and QEMU netdev
follow its pair, whatever network it is on. The kernel command line
carries every NIC's addresses, one devmemsim.nic=MAC,CIDR,CIDR6 per NIC
(nic_address().cmdline()); devmemsim-init gives each dmsnic interface the
addresses its MAC names.
"""

from dataclasses import dataclass

PREFIX_LEN = 24
PREFIX_LEN6 = 64
MAX_NODES = 16  # what a cluster may have (the CLI checks --nodes)
MAX_NETWORKS = 32  # data networks: 10.10.0.0/24 .. 10.10.31.0/24


@dataclass(frozen=True)
class Link:
    """One kind of link between the nodes: which QEMU NIC carries it, the
    netdev id it has in QEMU, the MAC byte that tells it apart, its /24."""

    device: str
    netdev: str
    mac_byte: int
    net: str  # the first three octets of its /24
    net6: str = ""  # its IPv6 /64: the leading groups, the rest zero ("" = no IPv6)
    pair: int = 0  # data links: the NIC/GPU pair whose NICs it joins

    def mac(self, index: int) -> str:
        return f"52:54:00:{self.mac_byte:02x}:{self.pair:02x}:{index:02x}"

    def addr(self, index: int) -> str:
        return f"{self.net}.{index + 1}"

    def cidr(self, index: int) -> str:
        return f"{self.addr(index)}/{PREFIX_LEN}"

    def addr6(self, index: int) -> str:
        return f"{self.net6}::{index + 1:x}"

    def cidr6(self, index: int) -> str:
        return f"{self.addr6(index)}/{PREFIX_LEN6}"

    def host_glob(self) -> str:
        """Every address of this link, as an ssh_config Host pattern."""
        return f"{self.net}.*"


DATA = Link("devmemsim-nic", "data", 0xd5, "10.10.0", "fd10:10")


def data_link(pair: int) -> Link:
    """The data link of every node's NIC `pair` (DATA for pair 0)."""
    if not pair:
        return DATA
    return Link(DATA.device, f"{DATA.netdev}{pair}", DATA.mac_byte, f"10.10.{pair}",
                f"{DATA.net6}:{pair:x}", pair)


@dataclass(frozen=True)
class NicAddress:
    """One data NIC of a node: pair `pair` of node `node`, on network
    `network` (the index of its subnet)."""

    node: int
    pair: int
    network: int

    @property
    def netdev(self) -> str:
        return data_link(self.pair).netdev

    @property
    def mac(self) -> str:
        return data_link(self.pair).mac(self.node)

    @property
    def addr(self) -> str:
        return data_link(self.network).addr(self.node)

    @property
    def cidr(self) -> str:
        return data_link(self.network).cidr(self.node)

    @property
    def addr6(self) -> str:
        return data_link(self.network).addr6(self.node)

    @property
    def cidr6(self) -> str:
        return data_link(self.network).cidr6(self.node)

    def cmdline(self) -> str:
        """The kernel command line word devmemsim-init reads."""
        return f"devmemsim.nic={self.mac},{self.cidr},{self.cidr6}"


def nic_address(node: int, pair: int, network: int) -> NicAddress:
    """Node `node`'s NIC `pair` on data network `network`."""
    if not 0 <= network < MAX_NETWORKS:
        raise ValueError(f"network {network}: at most {MAX_NETWORKS} data networks")
    return NicAddress(node, pair, network)


# Extra links two nodes get with `boot --compare-nics` (the NIC benchmark).
COMPARE = (Link("e1000e", "e1000e", 0xe1, "10.11.0"),
           Link("virtio-net-pci", "virtio", 0xf1, "10.12.0"))
# Per node, an IPv6 /64 of its own behind it (the selftests' LOCAL_PREFIX_V6:
# addresses for netkit containers the peer routes to via the node).
CONTAINER_NET6 = "fd10:20"
# The management NIC (QEMU user networking, one per node, never shared).
MGMT_MAC_BYTE = 0xff


def mgmt_mac(index: int) -> str:
    return f"52:54:00:00:{MGMT_MAC_BYTE:02x}:{index:02x}"


def node_name(index: int) -> str:
    return f"node{index}"


def node_index(node) -> int:
    """node3, '3' or 3 -> 3."""
    text = str(node)
    return int(text[len("node"):] if text.startswith("node") else text)


def data_addr(node) -> str:
    """Node's address on the data link (node name or index)."""
    return DATA.addr(node_index(node))


def container_prefix6(node) -> str:
    """Node's IPv6 prefix for containers behind it (node name or index)."""
    return f"{CONTAINER_NET6}:{node_index(node):x}::/{PREFIX_LEN6}"


def data_addr6(node) -> str:
    """Node's IPv6 address on the data link (node name or index)."""
    return DATA.addr6(node_index(node))
