"""A node's PCIe tree as QEMU builds it, defined once for the CLI's nodes and
the qtest tests, from the [topology] of the node's TOML: the file the model
reads, with its schema and defaults (configs/node/default.toml; the model
checks the file, sysc-model/src/topology.cc, before QEMU starts).

Without a [topology] a node is one NIC and one GPU on two downstream ports of
one switch behind a root port, so peer-to-peer traffic between them stays
below the switch. In general:
  - every [[topology.switch]] is a pcie-root-port, an x3130-upstream on it and
    one xio3130-downstream per device under the switch;
  - a device on a root port ("SOCKET.PORT") is on a pcie-root-port of its own;
  - the model's NIC i and GPU i (pair i; NICs and GPUs numbered in the order
    of their [[topology.nic]] / [[topology.gpu]] tables, count= expanding in
    place) are devmemsim-nic / devmemsim-gpu with index=i.
The guest sees one root complex: every root port is on pcie.0, whatever
socket the model puts it on. Ports are created walking the pairs (NIC i, then
GPU i): a switch or root port comes when its first device does (switches
without devices last), a downstream port with its device. The guest numbers
its NICs (ethN) and GPUs (/dev/dmsgpuN) in that PCI order, which is the pair
order whenever the devices of a kind under each switch have consecutive
indices (as when every switch holds whole pairs, or count= tables).
QEMU ids: root ports rp0, rp1..., upstream ports up0, up1..., downstream ports
dn0, dn1..., each numbered in creation order.
"""

from dataclasses import dataclass

from . import tomlfile
from .errors import UsageError


@dataclass(frozen=True)
class Device:
    """One NIC or GPU of the node, as QEMU places it."""

    kind: str  # "nic" or "gpu"
    index: int  # the model's instance: pair index, the device's index=
    name: str  # the topology's name (the counters name it so, docs/stats.md)
    on: str  # the switch it is under, or the root port "SOCKET.PORT" it is on
    bus: str  # QEMU id of the port it plugs into

    def device(self, node: str = "dms") -> str:
        """The -device value up to its own options (netdev=, mac=...)."""
        index = f",index={self.index}" if self.index else ""
        return f"devmemsim-{self.kind},node={node},bus={self.bus}{index}"


@dataclass(frozen=True)
class Layout:
    """A node's PCIe tree in QEMU: its ports, and where its devices go."""

    ports: tuple  # QEMU argv: the root, upstream and downstream ports
    nics: tuple  # Device per NIC, in index order
    gpus: tuple  # Device per GPU, in index order
    switches: dict  # switch name -> QEMU id of its upstream port

    @property
    def pairs(self) -> int:
        return len(self.nics)

    def root_links(self) -> list:
        """The links into root ports, as the counters name them
        (docs/stats.md): each switch's upstream link, and the link of each
        device on a root port."""
        ups = ["upstream"] if len(self.switches) == 1 else [f"{s}.upstream" for s in self.switches]
        return ups + [d.name for d in self.nics + self.gpus if "." in d.on]


class _Spec:
    """The [topology] table resolved as the model resolves it: names,
    placements and default values (topology.cc, Builder)."""

    def __init__(self, topo: dict, where: str):
        self.where = where
        sockets = topo.get("socket") or [{}]
        self.sockets = [s.get("name", f"s{i}") for i, s in enumerate(sockets)]
        tables = [topo.get(k) for k in ("switch", "nic", "gpu")]
        if not any(tables):  # the default tree (topology_of() in the model)
            tables = [[{}], [{"name": "nic"}], [{"name": "gpu"}]]
        switches, nics, gpus = (t or [] for t in tables)
        self.switches = []  # (name, root port)
        for i, s in enumerate(switches):
            on = s.get("on") or f"{self.sockets[0]}.rp{i}"
            self.switches.append((s.get("name", f"sw{i}"), on))
        self.devices = {"nic": self._devices("nic", nics), "gpu": self._devices("gpu", gpus)}

    def _devices(self, kind: str, tables: list) -> list:
        """[(name, on)] in the model's order."""
        total = sum(t.get("count", 1) for t in tables)
        out = []
        for t in tables:
            count = t.get("count", 1)
            for j in range(count):
                if "name" in t:
                    name = t["name"] + (str(j) if count > 1 else "")
                else:
                    name = f"{kind}{len(out)}" if total > 1 else kind
                out.append((name, self._place(kind, name, t.get("on", ""))))
        return out

    def _place(self, kind: str, name: str, on: str) -> str:
        if "." in on or on in (s for s, _ in self.switches):
            return on
        if not on and len(self.switches) == 1:
            return self.switches[0][0]
        raise UsageError(f"{self.where}: topology.{kind} {name!r}: "
                         f"no switch or root port {on!r} (the model's dms-config says more)")


class _Builder:
    """Creates the ports in the order the module's docstring gives."""

    def __init__(self, spec: _Spec):
        self.spec = spec
        self.argv = []
        self.chassis = 0
        self.root_ports = 0
        self.ups = {}  # switch name -> (upstream id, downstream ports so far)
        self.downs = 0

    def _port(self, kind: str, pid: str, bus: str, slot: int) -> None:
        self.chassis += 1
        self.argv += ["-device", f"{kind},id={pid},bus={bus},chassis={self.chassis},slot={slot}"]

    def _root_port(self) -> str:
        rp = f"rp{self.root_ports}"
        self._port("pcie-root-port", rp, "pcie.0", self.root_ports)
        self.root_ports += 1
        return rp

    def _switch(self, name: str) -> str:
        if name not in self.ups:
            rp = self._root_port()
            up = f"up{len(self.ups)}"
            self.argv += ["-device", f"x3130-upstream,id={up},bus={rp}"]
            self.ups[name] = [up, 0]
        return self.ups[name][0]

    def bus_for(self, on: str) -> str:
        """A new port for one device under switch or root port `on`."""
        if "." in on:
            return self._root_port()
        up = self._switch(on)
        dn = f"dn{self.downs}"
        self._port("xio3130-downstream", dn, up, self.ups[on][1])
        self.ups[on][1] += 1
        self.downs += 1
        return dn

    def build(self) -> Layout:
        nics, gpus = self.spec.devices["nic"], self.spec.devices["gpu"]
        placed = {"nic": [], "gpu": []}
        for i in range(len(nics)):
            for kind, devs in (("nic", nics), ("gpu", gpus)):
                name, on = devs[i]
                placed[kind].append(Device(kind, i, name, on, self.bus_for(on)))
        for name, _ in self.spec.switches:
            self._switch(name)
        switches = {name: self.ups[name][0] for name, _ in self.spec.switches}
        return Layout(tuple(self.argv), tuple(placed["nic"]), tuple(placed["gpu"]), switches)


def from_table(topo: dict, where: str = "node config") -> Layout:
    """The layout of a [topology] table (a dict as tomllib reads it)."""
    spec = _Spec(topo, where)
    if len(spec.devices["nic"]) != len(spec.devices["gpu"]):
        raise UsageError(f"{where}: topology: {len(spec.devices['gpu'])} GPUs for "
                         f"{len(spec.devices['nic'])} NICs (the model's dms-config says more)")
    return _Builder(spec).build()


def load(path) -> Layout:
    """The layout of a node TOML file's [topology] (the default without one)."""
    return from_table(tomlfile.read(path).get("topology", {}), str(path))


# The default node: NIC and GPU on two downstream ports of one switch.
DEFAULT = from_table({})
