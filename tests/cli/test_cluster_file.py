"""Cluster files (tools/devmemsim/clusterfile.py): the plans of good files
(nodes, networks, every NIC's addresses from addressing.py), `--nodes N` as
the default cluster, and bad files answered with one line naming the file,
the key and the problem. No guest boots."""

import unittest
from pathlib import Path

from clilib import FileCase, cli
from devmemsim import addressing, cluster, clusterfile
from devmemsim.build import Artifacts
from devmemsim.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ROOT / "configs" / "cluster"
NODE_CONFIGS = ROOT / "configs" / "node"


class ClusterFile(FileCase):
    def plan(self, text: str) -> clusterfile.Plan:
        return clusterfile.load(self.write(text))

    def assertBad(self, text: str, key: str, problem: str):
        path = self.write(text)
        with self.assertRaises(UsageError) as cm:
            clusterfile.load(path)
        msg = str(cm.exception)
        self.assertNotIn("\n", msg)
        self.assertTrue(msg.startswith(f"{path}: {key}: "), msg)
        self.assertIn(problem, msg)
        # The CLI answers so before it builds or boots anything.
        res = cli("boot", "--name", "never-booted", "--cluster", path, timeout=60)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(res.stderr.strip(), f"devmemsim: {msg}")

    def nic_table(self, plan):
        return {n.name: [(c.pair, c.network, c.address and (c.address.mac, c.address.cidr, c.address.cidr6))
                         for c in n.nics] for n in plan.nodes}

    # ---------------------------------------------------------------- good
    def test_shipped_files(self):
        four = clusterfile.load(CLUSTERS / "four.toml")
        self.assertEqual([n.name for n in four.nodes], ["node0", "node1", "node2", "node3"])
        self.assertEqual({(n.memory, n.smp) for n in four.nodes}, {("512M", 1)})
        self.assertEqual([(w.name, w.kind, len(w.members)) for w in four.networks.values()],
                         [("fabric", "switch", 4)])
        nets = clusterfile.load(CLUSTERS / "two-networks.toml")
        self.assertEqual([(w.name, w.kind, w.members) for w in nets.networks.values()],
                         [("fabric", "switch", (("alpha", 0), ("beta", 0), ("gamma", 0))),
                          ("side", "p2p", (("alpha", 1), ("beta", 1)))])
        ex = clusterfile.load(CLUSTERS / "example.toml")
        node2 = ex.node("node2")
        self.assertEqual((node2.config, node2.memory, node2.smp), (NODE_CONFIGS / "two-pairs.toml", "2G", 1))
        self.assertEqual(ex.node("node0").sets, ("nic.queues=8",))
        self.assertEqual(self.nic_table(ex)["node2"],
                         [(0, "fabric", ("52:54:00:d5:00:02", "10.10.0.3/24", "fd10:10::3/64")),
                          (1, "storage", ("52:54:00:d5:01:02", "10.10.1.3/24", "fd10:10:1::3/64"))])

    def test_default_cluster_is_the_old_address_plan(self):
        for n in (1, 2, 3):
            plan = clusterfile.default_plan(n)
            self.assertEqual([x.name for x in plan.nodes], [addressing.node_name(i) for i in range(n)])
            for node in plan.nodes:
                (nic,) = node.nics
                self.assertEqual(nic.address.mac, addressing.DATA.mac(node.index))
                self.assertEqual(nic.address.addr, addressing.data_addr(node.index))
                self.assertEqual(nic.address.addr6, addressing.data_addr6(node.index))
                self.assertIn(f"devmemsim.nic={nic.address.mac},{nic.address.cidr},{nic.address.cidr6}",
                              node.cmdline())
            kinds = {1: "none", 2: "p2p", 3: "switch"}
            self.assertEqual([(w.name, w.kind) for w in plan.networks.values()], [("data", kinds[n])])

    def test_default_cluster_of_two_pair_nodes(self):
        plan = clusterfile.default_plan(2, str(NODE_CONFIGS / "two-pairs.toml"))
        self.assertEqual(list(plan.networks), ["data", "data1"])
        for node in plan.nodes:
            for pair, nic in enumerate(node.nics):
                link = addressing.data_link(pair)
                self.assertEqual((nic.address.mac, nic.address.cidr, nic.address.cidr6),
                                 (link.mac(node.index), link.cidr(node.index), link.cidr6(node.index)))
            self.assertEqual(len(node.cmdline().split()), 2)

    def test_names_overrides_and_networks(self):
        plan = self.plan(f"""
            [nodes]
            names = ["gpu-a", "gpu-b", "store"]
            config = "{NODE_CONFIGS / 'two-pairs.toml'}"
            networks = ["fabric", "side"]
            [node.store]
            config = "{NODE_CONFIGS / 'default.toml'}"
            networks = ["fabric"]
            smp = 1
            [[network]]
            name = "fabric"
            [[network]]
            name = "side"
            kind = "p2p"
            """)
        self.assertEqual(self.nic_table(plan), {
            "gpu-a": [(0, "fabric", ("52:54:00:d5:00:00", "10.10.0.1/24", "fd10:10::1/64")),
                      (1, "side", ("52:54:00:d5:01:00", "10.10.1.1/24", "fd10:10:1::1/64"))],
            "gpu-b": [(0, "fabric", ("52:54:00:d5:00:01", "10.10.0.2/24", "fd10:10::2/64")),
                      (1, "side", ("52:54:00:d5:01:01", "10.10.1.2/24", "fd10:10:1::2/64"))],
            "store": [(0, "fabric", ("52:54:00:d5:00:02", "10.10.0.3/24", "fd10:10::3/64"))],
        })
        self.assertEqual(plan.networks["fabric"].members, (("gpu-a", 0), ("gpu-b", 0), ("store", 0)))
        self.assertEqual(plan.networks["side"].kind, "p2p")
        self.assertEqual([n.smp for n in plan.nodes], [2, 2, 1])
        as_json = plan.to_json()
        self.assertEqual(as_json["networks"][1], {"name": "side", "kind": "p2p", "ipv4": "10.10.1.0/24",
                                                  "ipv6": "fd10:10:1::/64", "nics": ["gpu-a.nic1", "gpu-b.nic1"]})

    def test_unconnected_nic_has_no_address(self):
        plan = self.plan(f"""
            [nodes]
            count = 2
            config = "{NODE_CONFIGS / 'two-pairs.toml'}"
            networks = ["fabric", ""]
            [[network]]
            name = "fabric"
            """)
        for node in plan.nodes:
            self.assertEqual([(c.network, c.address is None) for c in node.nics], [("fabric", False), ("", True)])
            self.assertEqual(len(node.cmdline().split()), 1)

    def test_relative_config_starts_at_the_file(self):
        (Path(self.dir.name) / "hw.toml").write_text("[nic]\nqueues = 4\n")
        plan = self.plan("""
            [nodes]
            count = 1
            config = "hw.toml"
            """)
        self.assertEqual(plan.nodes[0].config, Path(self.dir.name).resolve() / "hw.toml")

    def test_qemu_links_follow_the_plan(self):
        plan = self.plan(f"""
            [nodes]
            count = 3
            config = "{NODE_CONFIGS / 'two-pairs.toml'}"
            networks = ["fabric", "side"]
            [node.node2]
            config = "{NODE_CONFIGS / 'default.toml'}"
            networks = ["fabric"]
            memory = "512M"
            [[network]]
            name = "fabric"
            [[network]]
            name = "side"
            kind = "p2p"
            """)
        art = Artifacts(Path("qemu"), Path("bzImage"), "7.3", Path("rootfs.img"), Path("payload.img"))
        run = Path(self.dir.name)
        argv = {n.name: cluster.qemu_argv(art, run, cluster.NodeSpec(n, n.config), plan,
                                          cluster.Machine(pcap="/pcaps"))
                for n in plan.nodes}

        def opts(node, flag):
            return [argv[node][i + 1] for i, a in enumerate(argv[node]) if a == flag]
        self.assertEqual(opts("node2", "-m"), ["512M"])
        self.assertEqual(opts("node0", "-m"), ["1G"])
        for n in ("node0", "node1", "node2"):
            self.assertIn(f"vde,id=data,sock={run}/vde-fabric", opts(n, "-netdev"))
            self.assertIn(f"filter-dump,id=dump-data,netdev=data,file=/pcaps/{n}-fabric.pcap", opts(n, "-object"))
            append = opts(n, "-append")[0]
            for nic in plan.node(n).nics:
                self.assertIn(nic.address.cmdline(), append)
        self.assertIn(f"stream,id=data1,server=on,addr.type=unix,addr.path={run}/side.sock", opts("node0", "-netdev"))
        self.assertIn(f"stream,id=data1,server=off,reconnect-ms=500,addr.type=unix,addr.path={run}/side.sock",
                      opts("node1", "-netdev"))
        self.assertEqual(len(opts("node2", "-netdev")), 2)  # management and fabric
        nics = [d for d in opts("node1", "-device") if d.startswith("devmemsim-nic")]
        self.assertEqual(len(nics), 2)
        self.assertTrue(nics[0].endswith(",mac=52:54:00:d5:00:01,netdev=data"), nics)
        self.assertTrue(nics[1].endswith(",mac=52:54:00:d5:01:01,netdev=data1"), nics)

    def test_multicast_network_and_a_node_on_another_host(self):
        plan = self.plan("""
            [nodes]
            names = ["here", "there"]
            networks = ["span"]
            [node.there]
            host = "user@gpu2"
            [[network]]
            name = "span"
            kind = "multicast"
            group = "239.255.7.1"
            port = 4000
            ttl = 2
            interface = "eth1"
            """)
        self.assertEqual([(n.name, n.host) for n in plan.nodes], [("here", ""), ("there", "user@gpu2")])
        span = plan.networks["span"]
        self.assertEqual((span.kind, span.members), ("multicast", (("here", 0), ("there", 0))))
        self.assertEqual(span.multicast.url(), "vxvde://239.255.7.1/port=4000/ttl=2/if=eth1")
        self.assertEqual(plan.to_json()["networks"][0]["url"], span.multicast.url())
        self.assertEqual(plan.to_json()["nodes"][1]["host"], "user@gpu2")
        art = Artifacts(Path("qemu"), Path("bzImage"), "7.3", Path("rootfs.img"), Path("payload.img"))
        there = Path("/run/there")
        argv = cluster.qemu_argv(art, there, cluster.NodeSpec(plan.nodes[1], plan.nodes[1].config), plan,
                                 cluster.Machine(), there / "there.toml")
        self.assertIn("vde,id=data,sock=vxvde://239.255.7.1/port=4000/ttl=2/if=eth1", argv)
        self.assertIn(f"socket,id=ctl,path={there}/there.ctl,server=on,wait=off", argv)
        self.assertIn(f"devmemsim-node,id=dms,config={there}/there.toml,stats-json={there}/there.stats.json", argv)

    # ----------------------------------------------------------------- bad
    def test_bad_files(self):
        two = NODE_CONFIGS / "two-pairs.toml"
        cases = [
            ("[nodes]\ncount = 2\n[nodes2]\n", "nodes2", "unknown key"),
            ("[nodes]\nconfig = 'x'\n", "nodes", "give either count or names"),
            ("[nodes]\ncount = 2\nnames = ['a']\n", "nodes", "give either count or names"),
            ("[nodes]\ncount = 17\n", "nodes.count", "expected an integer 1..16"),
            ("[nodes]\ncount = '2'\n", "nodes.count", "expected an integer 1..16"),
            ("[nodes]\nnames = ['a', 'A']\n", "nodes.names", "'A': a name is"),
            ("[nodes]\nnames = ['a', 'a']\n", "nodes.names", "'a' twice"),
            ("[nodes]\ncount = 2\nmemroy = '1G'\n", "nodes.memroy", "unknown key"),
            ("[nodes]\ncount = 2\nmemory = '1T'\n", "nodes.memory", "expected a size"),
            ("[nodes]\ncount = 2\nsmp = 9\n", "nodes.smp", "expected an integer 1..8"),
            ("[nodes]\ncount = 2\nset = ['nic.queues']\n", "nodes.set", "expected KEY=VALUE"),
            ("[nodes]\ncount = 2\nconfig = 'missing.toml'\n", "nodes.config", "no such file"),
            ("[nodes]\ncount = 2\n[node.node5]\nsmp = 1\n", "node.node5", "unknown key"),
            ("[nodes]\ncount = 2\n[node.node1]\ncount = 1\n", "node.node1.count", "unknown key"),
            ("[nodes]\ncount = 2\nnetworks = ['a']\n", "nodes.networks", "no [[network]] tables"),
            ("[nodes]\ncount = 2\n[[network]]\nkind = 'switch'\n", "network[0]", "needs a name"),
            ("[nodes]\ncount = 2\n[[network]]\nname = 'a'\n[[network]]\nname = 'a'\n",
             "network[1].name", "'a' twice"),
            ("[nodes]\ncount = 2\n[[network]]\nname = 'a'\nkind = 'hub'\n", "network.a.kind", "'hub'"),
            ("[nodes]\ncount = 3\n[[network]]\nname = 'a'\nkind = 'p2p'\n", "network.a",
             "exactly two NICs; 3 are on it"),
            ("[nodes]\ncount = 2\nnetworks = ['b']\n[[network]]\nname = 'a'\n", "nodes.networks",
             "unknown network 'b'"),
            ("[nodes]\ncount = 2\nnetworks = ['', 'a']\n[[network]]\nname = 'a'\n", "nodes.networks",
             "2 network(s) for node node0's 1 NIC(s)"),
            (f"[nodes]\ncount = 2\nconfig = '{two}'\nnetworks = ['a', 'a']\n[[network]]\nname = 'a'\n",
             "nodes.networks", "NICs 0 and 1 are both on network 'a'"),
            (f"[nodes]\ncount = 2\nconfig = '{two}'\n[[network]]\nname = 'a'\n", "network",
             "1 network(s) for node node0's 2 NIC(s)"),
            ("[nodes]\ncount = 2\n[[network]]\nname = 'a'\n[[network]]\nname = 'b'\n", "network.b",
             "no NIC is on it"),
            ("[nodes]\ncount = 2\n[[network]]\nname = 'a'\nkind = 'multicast'\n", "network.a",
             "a multicast network needs a group"),
            ("[nodes]\ncount = 2\n[[network]]\nname = 'a'\nkind = 'multicast'\ngroup = '10.0.0.1'\n",
             "network.a.group", "'10.0.0.1': expected a multicast address"),
            ("[nodes]\ncount = 2\n[[network]]\nname = 'a'\nkind = 'multicast'\ngroup = '239.1.1.1'\nttl = 0\n",
             "network.a.ttl", "expected an integer 1..255"),
            ("[nodes]\ncount = 2\n[[network]]\nname = 'a'\nkind = 'multicast'\ngroup = '239.1.1.1'\n"
             "interface = 'a b'\n", "network.a.interface", "expected a network interface name"),
            ("[nodes]\ncount = 2\n[[network]]\nname = 'a'\nport = 4000\n", "network.a.port",
             "only a multicast network has a port (this is a switch)"),
            (f"[nodes]\ncount = 2\nconfig = '{two}'\nnetworks = ['a', 'b']\n[[network]]\nname = 'a'\n"
             "kind = 'multicast'\ngroup = '239.1.1.1'\n[[network]]\nname = 'b'\nkind = 'multicast'\n"
             "group = '239.1.1.1'\n", "network.b.group", "239.1.1.1 port 14789: network 'a' has them too"),
            ("[nodes]\ncount = 2\n[node.node1]\nhost = '-oProxyCommand=x'\n", "node.node1.host",
             "expected an ssh destination"),
            ("[nodes]\ncount = 2\n[node.node1]\nhost = 'gpu2'\n[[network]]\nname = 'a'\n", "node.node1.host",
             "node node1 is on host 'gpu2', but its network 'a' is a switch of this host; nodes on other hosts "
             "join multicast networks only"),
        ]
        for text, key, problem in cases:
            with self.subTest(key=key, problem=problem):
                self.assertBad(text, key, problem)

    def test_malformed_toml_names_file_and_line(self):
        path = self.write("[nodes]\ncount = 2\ncount = 3\n")
        res = cli("boot", "--cluster", path, timeout=60)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn(f"{path}: ", res.stderr)
        self.assertIn("line 3", res.stderr)

    def test_cli_options_the_file_replaces(self):
        four = str(CLUSTERS / "four.toml")
        for opt in (["--nodes", "2"], ["--smp", "1"], ["--memory", "1G"], ["--set", "nic.queues=4"],
                    ["--config", str(NODE_CONFIGS / "default.toml")]):
            with self.subTest(opt=opt[0]):
                res = cli("run", "--cluster", four, *opt, "--", "true", timeout=60)
                self.assertEqual(res.returncode, 2, res.stderr)
                self.assertEqual(res.stderr.strip(), f"devmemsim: {opt[0]}: not with --cluster (the cluster file says it)")
        res = cli("demo", "--cluster", "/nonexistent/c.toml", timeout=60)
        self.assertEqual(res.stderr.strip(), "devmemsim: --cluster /nonexistent/c.toml: no such file")
        res = cli("boot", "--cluster", four, "--pcap", "/nonexistent/dir/pcap", timeout=60)
        self.assertIn("--pcap /nonexistent/dir/pcap: no such directory", res.stderr)
        self.assertEqual(res.returncode, 2, res.stderr)

    def test_demo_mtu_over_a_switch(self):
        res = cli("demo", "--cluster", str(CLUSTERS / "four.toml"), timeout=60)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(res.stderr.strip(), "devmemsim: --mtu 9000: the transfers cross network 'fabric', "
                         "a VDE switch, which carries an MTU of 1500 at most (--mtu 1500)")

    def test_demo_needs_two_nodes(self):
        path = self.write("[nodes]\ncount = 1\n")
        res = cli("demo", "--cluster", path, timeout=60)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(res.stderr.strip(), f"devmemsim: {path}: the demo needs two nodes; the file has 1")


if __name__ == "__main__":
    unittest.main(verbosity=2)
