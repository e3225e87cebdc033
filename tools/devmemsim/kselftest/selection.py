"""Which selftest files a run takes: the default set (the TEST_PROGS of
drivers/net and drivers/net/hw, less EXCLUDED), or named ones, each with
the timeout its directory's settings give."""

import re
from dataclasses import dataclass
from pathlib import Path

from ..cluster import Machine
from ..errors import UsageError

SELFTESTS = "tools/testing/selftests"
NET = "drivers/net"  # TEST paths are relative to SELFTESTS/NET
DEFAULT_DIRS = ("", "hw")  # whose Makefile's TEST_PROGS make the default set
# Files of those Makefiles the default set leaves out: they need hardware
# devmemsim does not model (each node has one NIC port, cabled to the other
# node's; no switch ASIC, e-switch or SR-IOV).
EXCLUDED = {
    "hw/devlink_rate_cross_esw.py": "needs two PFs of one chip in switchdev mode behind a bond (an e-switch)",
    "hw/devlink_rate_tc_bw.py": "needs SR-IOV VFs, their representors and devlink-rate TC shaping (an e-switch)",
    "hw/hw_stats_l3.sh": "needs a switch ASIC with router-interface L3 counters (mlxsw)",
    "hw/hw_stats_l3_gre.sh": "needs a switch ASIC that offloads GRE tunnels, with L3 counters",
    "hw/ethtool.sh": "needs two local ports cabled to each other (link mode autonegotiation)",
    "hw/ethtool_extended_state.sh": "needs two local ports cabled to each other and one without cable",
    "hw/ethtool_mm.sh": "needs two local ports cabled to each other with MAC Merge (802.3br)",
    "hw/loopback.sh": "needs two local ports cabled to each other",
    "hw/devlink_port_split.py": "needs devlink ports with lanes to split (a switch ASIC; TEST_PROGS_EXTENDED)",
}
# Files that need more vCPUs on the runner than the cluster has: it is
# booted again with them for these files (and back for the files after
# them); Session.plan_for() says which nodes get them.
# toeplitz.py's RPS cases steer packets to CPUs that no RX queue interrupt
# uses and skip without two such CPUs: dmsnic's 4 queue vectors take one
# CPU each (CPUs 0-3), so node0 needs 6 vCPUs to leave CPUs 4 and 5 free.
FILE_MACHINES = {
    "hw/toeplitz.py": Machine(smp=6),
}
DEFAULT_TIMEOUT = 45  # kselftest_default_timeout (kselftest/runner.sh)
NO_TIMEOUT_LIMIT = 1800  # host-side limit of a file whose settings say timeout=0
HOST_MARGIN = 60  # host-side limit above the guest's own timeout


@dataclass
class TestFile:
    rel: str  # under SELFTESTS/NET, e.g. hw/devmem.py
    timeout: int  # seconds, 0 = none

    @property
    def collection(self) -> str:
        return str(Path(NET) / Path(self.rel).parent).rstrip("/.")

    @property
    def name(self) -> str:
        return Path(self.rel).name

    @property
    def test(self) -> str:
        return f"{self.collection}:{self.name}"

    @property
    def host_limit(self) -> float:
        return self.timeout + HOST_MARGIN if self.timeout else NO_TIMEOUT_LIMIT


# ---- which files ----------------------------------------------------------

def makefile_list(makefile: Path, var: str) -> list:
    """The words a Makefile assigns to var (:=, = or +=), without make
    expansions: TEST_PROGS of a selftest directory."""
    try:
        text = makefile.read_text(errors="replace").replace("\\\n", " ")
    except OSError:
        return []
    words = []
    for line in text.splitlines():
        m = re.match(rf"^{var}\s*(?::=|\+=|=)(.*)$", line)
        if m:
            words += [w for w in m.group(1).split("#", 1)[0].split() if "$" not in w]
    return words


def test_progs(d: Path) -> list:
    mk = d / "Makefile"
    return makefile_list(mk, "TEST_PROGS") + makefile_list(mk, "TEST_PROGS_EXTENDED")


def settings_timeout(d: Path) -> int:
    """The timeout a directory's `settings` file gives its tests."""
    try:
        for line in (d / "settings").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "timeout" and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return DEFAULT_TIMEOUT


def default_set(base: Path) -> list:
    rels = []
    for d in DEFAULT_DIRS:
        rels += [str(Path(d) / f) for f in makefile_list(base / d / "Makefile", "TEST_PROGS")]
    return [r for r in rels if r not in EXCLUDED]


def check_tree(tree: Path) -> Path:
    """tree's drivers/net selftest directory, or UsageError."""
    base = tree / SELFTESTS / NET
    if not (base / "Makefile").is_file():
        raise UsageError(f"{tree}: has no {SELFTESTS}/{NET}/Makefile")
    return base


def resolve(tree: Path, names: list) -> list:
    """The TestFiles TEST arguments name (paths under drivers/net, a leading
    tools/testing/selftests/drivers/net/ allowed), or the default set."""
    base = check_tree(tree)
    rels = []
    for name in names:
        rel = name.removeprefix(f"{SELFTESTS}/").removeprefix(f"{NET}/")
        path = (base / rel).resolve()
        if not path.is_relative_to(base.resolve()) or not path.is_file():
            raise UsageError(f"{name}: no such test in {base}")
        rel = str(path.relative_to(base.resolve()))
        if path.name not in test_progs(path.parent):
            raise UsageError(f"{name}: not a test program of {NET}/{Path(rel).parent}/Makefile".replace("/./", "/"))
        rels.append(rel)
    rels = rels or default_set(base)
    return [TestFile(rel, settings_timeout((base / rel).parent)) for rel in dict.fromkeys(rels)]


def excluded_table() -> str:
    return "\n".join(f"  {rel:32} {why}" for rel, why in EXCLUDED.items())
