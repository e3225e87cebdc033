"""A cluster's plan: its nodes, each node's hardware, memory and vCPUs, the
data network each NIC is on, and the addresses that follow (addressing.py).

A plan comes from a cluster file (configs/cluster/*.toml; the schema is
configs/cluster/example.toml) or, for `--nodes N`, is the default cluster:
N nodes alike, every node's NIC i on data network i ("data", "data1", ...),
which is a point-to-point link when two NICs are on it, a switch when more
are, and no link at all for a single NIC. Both go through from_table(), so
`--nodes N` is the short form of a file with only `[nodes] count = N`.

Every mistake is a UsageError of one line: "FILE: KEY: problem".
"""

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from . import addressing, tomlfile, topology
from .errors import UsageError
from .paths import ROOT

DEFAULT_CONFIG = ROOT / "configs" / "node" / "default.toml"
# Node names become host names and run-directory file names.
NAME_RE = re.compile(r"[a-z][a-z0-9-]{0,30}\Z")
MEMORY_RE = re.compile(r"[1-9][0-9]*[MG]\Z")
MAX_SMP = 8
# vde_switch forwards frames of up to 1518 bytes (VLAN-tagged Ethernet) and
# cuts longer ones: a switch network carries an MTU of 1500 at most (a
# p2p stream socket carries any frame).
SWITCH_MTU = 1500
# A multicast network is VDE's distributed switch (vdeplug4's vxvde, Ethernet
# in UDP multicast), which spans hosts. vdeplug4 moves frames of up to
# 9234 bytes (VDE_ETHBUFSIZE: 9216 + header + VLAN tag), measured between
# two network namespaces: MTU 9216, above the NIC's 9000.
MULTICAST_MTU = 9216
KINDS = ("switch", "p2p", "multicast")  # what a file may give; "none": a default network of one NIC
NETWORK_KEYS = ("name", "kind", "group", "port", "ttl", "interface")
MULTICAST_KEYS = NETWORK_KEYS[2:]
VXVDE_PORT = 14789  # vxvde's default UDP port
# An ssh destination ([user@]host or a Host of the user's ssh config); never
# an option.
HOST_RE = re.compile(r"[A-Za-z0-9_.@:%\[\]-]{1,253}\Z")
IFNAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,15}\Z")
NODE_KEYS = ("config", "set", "memory", "smp", "networks", "host")
DEFAULTS = {"config": str(DEFAULT_CONFIG), "set": [], "memory": "1G", "smp": 2, "host": ""}


@dataclass(frozen=True)
class Multicast:
    """Where a multicast network's frames go: a UDP multicast group and
    port, sent with ttl, through interface (the kernel's route when "")."""

    group: str
    port: int
    ttl: int
    interface: str

    def url(self) -> str:
        """The network as a vdeplug4 URL (QEMU's -netdev vde,sock=...)."""
        opts = [f"port={self.port}", f"ttl={self.ttl}"] + ([f"if={self.interface}"] if self.interface else [])
        return "vxvde://" + "/".join([self.group, *opts])


@dataclass(frozen=True)
class Network:
    name: str
    kind: str  # "switch" (a VDE switch), "p2p" (a stream socket), "multicast" or "none"
    index: int  # its subnet: addressing.data_link(index)
    members: tuple  # (node name, pair) of the NICs on it, in node order
    multicast: Multicast = None  # a multicast network's group

    @property
    def linked(self) -> bool:
        """Whether QEMU links its NICs (one NIC alone has nobody to reach)."""
        return len(self.members) >= 2


@dataclass(frozen=True)
class Nic:
    pair: int
    network: str  # "" when not connected
    address: object  # addressing.NicAddress, None when not connected


@dataclass(frozen=True)
class Node:
    name: str
    index: int
    config: Path  # the node configuration file, as given
    sets: tuple  # KEY=VALUE overrides of it
    memory: str
    smp: int
    nics: tuple  # Nic per NIC/GPU pair of its [topology]
    host: str = ""  # the ssh destination it runs on; "" for this host

    def cmdline(self) -> str:
        """The kernel command line words that address its NICs."""
        return " ".join(n.address.cmdline() for n in self.nics if n.address)


@dataclass(frozen=True)
class Plan:
    source: str  # the cluster file, or "--nodes N"
    nodes: tuple
    networks: dict  # name -> Network, in subnet order

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise UsageError(f"{self.source}: no node {name!r}")

    def to_json(self) -> dict:
        nodes = [{"name": n.name, "index": n.index, "config": str(n.config), "set": list(n.sets),
                  "memory": n.memory, "smp": n.smp, "host": n.host,
                  "nics": [{"pair": c.pair, "network": c.network,
                            **({"netdev": c.address.netdev, "mac": c.address.mac, "ipv4": c.address.cidr,
                                "ipv6": c.address.cidr6} if c.address else {})} for c in n.nics]}
                 for n in self.nodes]
        nets = [{"name": w.name, "kind": w.kind, "ipv4": f"{addressing.data_link(w.index).net}.0/24",
                 "ipv6": f"{addressing.data_link(w.index).net6}::/64",
                 "nics": [f"{node}.nic{pair}" for node, pair in w.members],
                 **({"url": w.multicast.url()} if w.multicast else {})} for w in self.networks.values()]
        return {"source": self.source, "nodes": nodes, "networks": nets}


class _Reader:
    """Reads one file's tables; err() makes its one-line messages."""

    def __init__(self, where: str, base: Path):
        self.where = where
        self.base = base  # relative config paths start here

    def err(self, key: str, problem: str) -> UsageError:
        return UsageError(f"{self.where}: {key}: {problem}")

    def table(self, value, key: str, allowed) -> dict:
        if not isinstance(value, dict):
            raise self.err(key, "expected a table")
        for k in value:
            if k not in allowed:
                raise self.err(f"{key}.{k}" if key else k, "unknown key (expected one of: " + ", ".join(allowed) + ")")
        return value

    def integer(self, value, key: str, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.err(key, f"{value!r}: expected an integer {lo}..{hi}")
        return value

    def strings(self, value, key: str) -> list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.err(key, "expected a list of strings")
        return value

    def name(self, value, key: str) -> str:
        if not isinstance(value, str) or not NAME_RE.match(value):
            raise self.err(key, f"{value!r}: a name is a lower-case letter, then up to 30 of a-z, 0-9 and -")
        return value

    def settings(self, table: dict, key: str, inherited: dict) -> dict:
        """A node's config/set/memory/smp/networks over the inherited ones."""
        out = dict(inherited)
        if "config" in table:
            if not isinstance(table["config"], str):
                raise self.err(f"{key}.config", "expected a file name")
            path = (self.base / table["config"]).resolve()
            if not path.is_file():
                raise self.err(f"{key}.config", f"no such file {path}")
            out["config"] = str(path)
        if "set" in table:
            sets = self.strings(table["set"], f"{key}.set")
            for s in sets:
                if "=" not in s:
                    raise self.err(f"{key}.set", f"{s!r}: expected KEY=VALUE")
            out["set"] = sets
        if "memory" in table:
            if not isinstance(table["memory"], str) or not MEMORY_RE.match(table["memory"]):
                raise self.err(f"{key}.memory", f"{table['memory']!r}: expected a size such as \"512M\" or \"2G\"")
            out["memory"] = table["memory"]
        if "smp" in table:
            out["smp"] = self.integer(table["smp"], f"{key}.smp", 1, MAX_SMP)
        if "networks" in table:
            out["networks"] = self.strings(table["networks"], f"{key}.networks")
            out["networks_key"] = f"{key}.networks"
        if "host" in table:
            host = table["host"]
            if not isinstance(host, str) or not (host == "" or HOST_RE.match(host) and host[0] != "-"):
                raise self.err(f"{key}.host", f"{host!r}: expected an ssh destination such as \"gpu2\" "
                                              "or \"user@gpu2\" (\"\" for this host)")
            out["host"] = host
            out["host_key"] = f"{key}.host"
        return out

    def multicast(self, t: dict, key: str, kind: str):
        """A [[network]]'s group/port/ttl/interface (multicast only)."""
        given = [k for k in MULTICAST_KEYS if k in t]
        if kind != "multicast":
            if given:
                raise self.err(f"{key}.{given[0]}", f"only a multicast network has a {given[0]} (this is a {kind})")
            return None
        if "group" not in t:
            raise self.err(key, "a multicast network needs a group (an IPv4 or IPv6 multicast address)")
        try:
            group = ipaddress.ip_address(t["group"]) if isinstance(t["group"], str) else None
        except ValueError:
            group = None
        if not group or not group.is_multicast:
            raise self.err(f"{key}.group", f"{t['group']!r}: expected a multicast address such as \"239.255.0.1\"")
        iface = t.get("interface", "")
        if not isinstance(iface, str) or iface and not IFNAME_RE.match(iface):
            raise self.err(f"{key}.interface", f"{iface!r}: expected a network interface name such as \"eth0\"")
        return Multicast(str(group), self.integer(t.get("port", VXVDE_PORT), f"{key}.port", 1, 65535),
                         self.integer(t.get("ttl", 1), f"{key}.ttl", 1, 255), iface)


def _node_names(r: _Reader, nodes: dict) -> list:
    if ("count" in nodes) == ("names" in nodes):
        raise r.err("nodes", "give either count or names")
    if "count" in nodes:
        return [addressing.node_name(i) for i in range(r.integer(nodes["count"], "nodes.count", 1,
                                                                  addressing.MAX_NODES))]
    names = r.strings(nodes["names"], "nodes.names")
    if not 1 <= len(names) <= addressing.MAX_NODES:
        raise r.err("nodes.names", f"{len(names)} names: a cluster has 1..{addressing.MAX_NODES} nodes")
    for i, n in enumerate(names):
        r.name(n, "nodes.names")
        if n in names[:i]:
            raise r.err("nodes.names", f"{n!r} twice")
    return names


def _networks(r: _Reader, doc: dict) -> list:
    """[(name, kind, Multicast or None)] of the [[network]] tables, in order."""
    tables = doc.get("network", [])
    if not isinstance(tables, list):
        raise r.err("network", "expected [[network]] tables")
    if len(tables) > addressing.MAX_NETWORKS:
        raise r.err("network", f"{len(tables)} networks: at most {addressing.MAX_NETWORKS}")
    out = []
    for i, t in enumerate(tables):
        key = f"network[{i}]"
        r.table(t, key, NETWORK_KEYS)
        if "name" not in t:
            raise r.err(key, "a network needs a name")
        name = r.name(t["name"], f"{key}.name")
        if name in (n for n, _, _ in out):
            raise r.err(f"{key}.name", f"{name!r} twice")
        kind = t.get("kind", "switch")
        if kind not in KINDS:
            raise r.err(f"network.{name}.kind", f"{kind!r}: expected " + ", ".join(KINDS[:-1]) + " or " + KINDS[-1])
        mc = r.multicast(t, f"network.{name}", kind)
        same = [n for n, _, m in out if mc and m and (m.group, m.port) == (mc.group, mc.port)]
        if same:
            raise r.err(f"network.{name}.group", f"{mc.group} port {mc.port}: network {same[0]!r} has them "
                                                 "too (one group and port make one network)")
        out.append((name, kind, mc))
    return out


def _default_network(pair: int) -> str:
    return addressing.data_link(pair).netdev


def _attach(r: _Reader, names: list, settings: dict, declared: list) -> dict:
    """{node: [network name per NIC]}: where every node's NICs go."""
    known = [n for n, _, _ in declared]
    out = {}
    for node in names:
        s = settings[node]
        pairs = topology.load(s["config"]).pairs
        if not declared:
            if "networks" in s:
                raise r.err(s["networks_key"], "names networks, but the file has no [[network]] tables")
            out[node] = [_default_network(i) for i in range(pairs)]
            _check_remote(r, node, s, out[node], {})
            continue
        nets = s.get("networks", known[:pairs])
        key = s.get("networks_key", "network")
        if len(nets) != pairs:
            raise r.err(key, f"{len(nets)} network(s) for node {node}'s {pairs} NIC(s) "
                             f"({s['config']}); list one per NIC in nodes.networks or node.{node}.networks")
        for i, net in enumerate(nets):
            if net and net not in known:
                raise r.err(key, f"unknown network {net!r} (the [[network]] tables name: {', '.join(known)})")
            if net and net in nets[:i]:
                raise r.err(key, f"node {node}'s NICs {nets.index(net)} and {i} are both on network {net!r}")
        _check_remote(r, node, s, nets, dict((n, k) for n, k, _ in declared))
        out[node] = nets
    return out


def _check_remote(r: _Reader, node: str, s: dict, nets: list, kinds: dict) -> None:
    """A node on another host reaches only networks that span hosts: a
    switch and a p2p link are UNIX sockets in this host's run directory."""
    if not s["host"]:
        return
    for net in nets:
        if net and kinds.get(net) != "multicast":
            raise r.err(s["host_key"], f"node {node} is on host {s['host']!r}, but its network {net!r} is a "
                                       f"{kinds.get(net) or 'link'} of this host; nodes on other hosts join "
                                       "multicast networks only")


def _network_plan(r: _Reader, names: list, attached: dict, declared: list) -> dict:
    if not declared:  # one per pair index, as many as the widest node has
        width = max(len(v) for v in attached.values())
        declared = [(_default_network(i), "", None) for i in range(width)]
    nets = {}
    for index, (name, kind, mc) in enumerate(declared):
        members = tuple((n, pair) for n in names for pair, net in enumerate(attached[n]) if net == name)
        if not members:
            raise r.err(f"network.{name}", "no NIC is on it")
        if kind == "p2p" and len(members) != 2:
            raise r.err(f"network.{name}", f"a p2p link joins exactly two NICs; {len(members)} are on it")
        if not kind:
            kind = "switch" if len(members) > 2 else "p2p" if len(members) == 2 else "none"
        nets[name] = Network(name, kind, index, members, mc)
    return nets


def from_table(doc: dict, where: str, base: Path) -> Plan:
    """The plan of a cluster file's tables (as tomllib reads them); `where`
    names the file in messages, `base` is where relative paths start."""
    r = _Reader(where, base)
    r.table(doc, "", ("nodes", "node", "network"))
    nodes = r.table(doc.get("nodes", {}), "nodes", ("count", "names", *NODE_KEYS))
    names = _node_names(r, nodes)
    common = r.settings(nodes, "nodes", DEFAULTS)
    per_node = r.table(doc.get("node", {}), "node", names)
    settings = {}
    for n in names:
        key = f"node.{n}"
        settings[n] = r.settings(r.table(per_node.get(n, {}), key, NODE_KEYS), key, common)
    declared = _networks(r, doc)
    attached = _attach(r, names, settings, declared)
    nets = _network_plan(r, names, attached, declared)
    out = []
    for i, n in enumerate(names):
        s = settings[n]
        nics = tuple(Nic(pair, net, addressing.nic_address(i, pair, nets[net].index) if net else None)
                     for pair, net in enumerate(attached[n]))
        out.append(Node(n, i, Path(s["config"]), tuple(s["set"]), s["memory"], s["smp"], nics, s["host"]))
    return Plan(where, tuple(out), nets)


def load(path) -> Plan:
    """The plan of a cluster file."""
    return from_table(tomlfile.read(path), str(path), Path(path).resolve().parent)


def default_plan(nodes: int, config: str = "", sets=(), memory: str = "1G", smp: int = 2) -> Plan:
    """`--nodes N`: N nodes alike (their checks are the CLI's options')."""
    table = {"count": nodes, "set": list(sets), "memory": memory, "smp": smp}
    if config:
        table["config"] = str(Path(config).resolve())
    return from_table({"nodes": table}, f"--nodes {nodes}", Path.cwd())
