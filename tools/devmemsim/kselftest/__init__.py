"""`devmemsim kselftest`: the kernel's netdev driver selftests
(tools/testing/selftests/drivers/net and drivers/net/hw) on a booted
cluster, node0 running them against its dmsnic and node1 as their ssh
remote, the way drivers/net/README.rst describes a hardware run. With a
cluster file (--cluster), the file's first node runs them against its NIC 0
and the first other node on that NIC's network is the remote (Roles).

Per file: the timeout of its directory's `settings` (kselftest's rule: 45 s
without one, 0 = none) and a host-side limit above it; cases are shown as
their KTAP lines arrive; both consoles are scanned for kernel complaints and
the taint mask compared; a node that died fails the file and the cluster is
booted again for the next one. Results go to the terminal (a table) and, on
request, to KTAP, JUnit XML and JSON (ktap.py).

The package: selection.py (which files), session.py (the cluster and the
Session on it), clock.py (one wall clock for the cluster), limited.py
(commands with a host-side limit) and runner.py (the run, its results and
its signals). What the CLI, conformance and the tests use is named here."""

from .runner import Outputs, Stopped, run, run_files, vcpus_booted
from .selection import (EXCLUDED, FILE_MACHINES, NET, SELFTESTS, TestFile, default_set, excluded_table,
                        resolve)
from .session import (FIND_NETIF, REMOTE_NO_TIME_WAIT, Session, add_cluster_option, cluster_plan,
                      default_cluster, roles)

__all__ = ["EXCLUDED", "FILE_MACHINES", "FIND_NETIF", "NET", "Outputs", "REMOTE_NO_TIME_WAIT", "SELFTESTS",
           "Session", "Stopped", "TestFile", "add_cluster_option", "cluster_plan", "default_cluster",
           "default_set", "excluded_table", "resolve", "roles", "run", "run_files", "vcpus_booted"]
