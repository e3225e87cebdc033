// SPDX-License-Identifier: MIT
// [topology] in the node configuration: the default, good files, and each
// kind of mistake as one line naming the file, the key and the problem.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "config.h"
#include "node/node.h"
#include "temp_toml.h"

using namespace devmemsim;

namespace
{

// The one-line error loading `text` gives, without the file name prefix
// (checked here).
std::string error_of(const std::string &text)
{
	TempToml f(text);
	try {
		load_config(f.path());
	} catch (const ConfigError &e) {
		std::string m = e.what();
		EXPECT_EQ(m.find('\n'), std::string::npos) << m;
		EXPECT_EQ(m.rfind(f.path() + ": ", 0), 0u) << m;
		return m.substr(f.path().size() + 2);
	}
	return "";
}

Topology load(const std::string &text)
{
	TempToml f(text);
	return topology_of(load_config(f.path()));
}

const char *const kTwoSockets = "[[topology.socket]]\n"
				"[[topology.socket]]\nmem_base = \"64G\"\n"
				"[topology.inter_socket]\ngbps = 166\nlatency_ns = 60\n";

} // namespace

TEST(Topology, DefaultIsOneSwitchWithOnePair)
{
	NodeConfig cfg = load_config("", {"pcie.gen=5", "host.mem_bandwidth_gbps=800"});
	EXPECT_TRUE(cfg.topology.sockets.empty());
	Topology t = topology_of(cfg);
	ASSERT_EQ(t.sockets.size(), 1u);
	EXPECT_EQ(t.sockets[0].name, "s0");
	EXPECT_EQ(t.sockets[0].mem_gbps, 800u);
	ASSERT_EQ(t.switches.size(), 1u);
	EXPECT_EQ(t.switches[0].name, "sw0");
	EXPECT_EQ(t.switches[0].on.name, "rp0");
	EXPECT_EQ(t.switches[0].uplink.gen, 5u);
	ASSERT_EQ(t.nics.size(), 1u);
	ASSERT_EQ(t.gpus.size(), 1u);
	EXPECT_EQ(t.nics[0].name, "nic");
	EXPECT_EQ(t.gpus[0].name, "gpu");
	EXPECT_EQ(t.nics[0].on_switch, 0);
	EXPECT_EQ(t.gpus[0].link.gen, 5u);
	EXPECT_FALSE(cfg.iommu);
}

TEST(Topology, SocketsAloneKeepTheDefaultDevices)
{
	Topology t = load("[[topology.socket]]\nname = \"cpu0\"\nroot_complex_gbps = 500\n");
	EXPECT_EQ(t.sockets[0].name, "cpu0");
	EXPECT_EQ(t.sockets[0].root_complex_gbps, 500u);
	EXPECT_EQ(t.switches.size(), 1u);
	EXPECT_EQ(t.nics[0].name, "nic");
}

TEST(Topology, EightPairsUnderOneSwitch)
{
	Topology t = load("[[topology.switch]]\ngbps = 2048\n"
			  "[[topology.nic]]\ncount = 8\n[[topology.gpu]]\ncount = 8\n");
	ASSERT_EQ(t.nics.size(), 8u);
	ASSERT_EQ(t.gpus.size(), 8u);
	EXPECT_EQ(t.nics[7].name, "nic7");
	EXPECT_EQ(t.gpus[0].name, "gpu0");
	EXPECT_EQ(t.gpus[7].on_switch, 0);
	EXPECT_EQ(t.switches[0].gbps, 2048u);
	EXPECT_EQ(t.switches[0].on.name, "rp0");
}

TEST(Topology, TwoSocketsSwitchesAndRootPorts)
{
	Topology t = load(std::string(kTwoSockets) +
			  "[[topology.switch]]\non = \"s0.rp0\"\n"
			  "[[topology.switch]]\nname = \"far\"\non = \"s1.a\"\ngen = 5\n"
			  "[[topology.nic]]\nname = \"n\"\ncount = 2\non = \"sw0\"\n"
			  "[[topology.nic]]\non = \"s1.b\"\nwidth = 8\n"
			  "[[topology.gpu]]\ncount = 3\non = \"far\"\n");
	ASSERT_EQ(t.sockets.size(), 2u);
	EXPECT_EQ(t.sockets[1].name, "s1");
	EXPECT_EQ(t.sockets[1].mem_base, 64ull << 30);
	EXPECT_EQ(t.inter_socket_gbps, 166u);
	EXPECT_EQ(t.inter_socket_latency_ns, 60u);
	EXPECT_EQ(t.switches[1].on.socket, 1u);
	EXPECT_EQ(t.switches[1].uplink.gen, 5u);
	EXPECT_EQ(t.switches[0].uplink.gen, 4u);
	EXPECT_EQ(t.nics[0].name, "n0");
	EXPECT_EQ(t.nics[1].name, "n1");
	EXPECT_EQ(t.nics[2].name, "nic2");
	EXPECT_EQ(t.nics[2].on_switch, -1);
	EXPECT_EQ(t.nics[2].port.socket, 1u);
	EXPECT_EQ(t.nics[2].port.name, "b");
	EXPECT_EQ(t.nics[2].link.width, 8u);
	EXPECT_EQ(t.gpus[2].on_switch, 1);
}

TEST(Topology, IommuKeys)
{
	NodeConfig c = load_config("", {"iommu.enabled=true", "iommu.translation_ns=250"});
	EXPECT_TRUE(c.iommu);
	EXPECT_EQ(c.iommu_ns, 250u);
}

TEST(Topology, ToTomlRoundTrips)
{
	TempToml f(std::string(kTwoSockets) +
		   "[[topology.switch]]\non = \"s1.x\"\nwidth = 8\n"
		   "[[topology.nic]]\ncount = 2\n[[topology.gpu]]\non = \"s0.g\"\ngen = 6\n"
		   "[[topology.gpu]]\n"
		   "[iommu]\nenabled = true\n");
	NodeConfig c = load_config(f.path());
	TempToml back(to_toml(c));
	NodeConfig d = load_config(back.path());
	EXPECT_TRUE(d.iommu);
	EXPECT_EQ(to_toml(d), to_toml(c));
	Topology t = topology_of(d);
	EXPECT_EQ(t.sockets[1].mem_base, 64ull << 30);
	EXPECT_EQ(t.switches[0].uplink.width, 8u);
	EXPECT_EQ(t.gpus[0].link.gen, 6u);
	EXPECT_EQ(t.gpus[0].port.name, "g");
	EXPECT_EQ(t.gpus[1].on_switch, 0);
}

TEST(Topology, DefaultFileIsTheDefault)
{
	NodeConfig c = load_config(DEFAULT_TOML);
	EXPECT_TRUE(c.topology.sockets.empty());
	EXPECT_EQ(to_toml(c), to_toml(load_config("")));
}

TEST(TopologyErrors, Names)
{
	const std::string sw = "[[topology.switch]]\n";
	EXPECT_EQ(error_of(sw + "[[topology.nic]]\non = \"sw9\"\n[[topology.gpu]]\n"),
		  "topology.nic[0].on: no switch \"sw9\" (switches: sw0)");
	EXPECT_EQ(error_of("[[topology.nic]]\n[[topology.gpu]]\n"),
		  "topology.nic[0].on: missing: the switch or the root port (SOCKET.PORT) it "
		  "is on");
	EXPECT_EQ(error_of(sw + sw + "[[topology.nic]]\n[[topology.gpu]]\n"),
		  "topology.nic[0].on: missing: the switch or the root port (SOCKET.PORT) it "
		  "is on");
	EXPECT_EQ(error_of(sw + "name = \"x\"\n[[topology.nic]]\nname = \"x\"\n"),
		  "topology.nic[0].name: \"x\" is the name of a switch already");
	EXPECT_EQ(error_of(sw + "[[topology.nic]]\nname = \"gpu\"\n[[topology.gpu]]\n"),
		  "topology.gpu[0].name: \"gpu\" is the name of a nic already");
	EXPECT_EQ(error_of(sw + "name = \"a.b\"\n"),
		  "topology.switch[0].name: \"a.b\" is not a name (letters, digits, _ and -; "
		  "not \"upstream\" or \"inter_socket\")");
	EXPECT_EQ(error_of(sw + "name = \"upstream\"\n"),
		  "topology.switch[0].name: \"upstream\" is not a name (letters, digits, _ and "
		  "-; not \"upstream\" or \"inter_socket\")");
	EXPECT_EQ(error_of("[[topology.nic]]\non = \"s9.rp0\"\n"),
		  "topology.nic[0].on: no socket \"s9\" (sockets: s0)");
	EXPECT_EQ(error_of("[[topology.switch]]\non = \"rp0\"\n"),
		  "topology.switch[0].on: \"rp0\" is not a root port (SOCKET.PORT, e.g. s0.rp0)");
}

TEST(TopologyErrors, RootPortsCarryOneLink)
{
	EXPECT_EQ(error_of("[[topology.switch]]\non = \"s0.rp0\"\n"
			   "[[topology.switch]]\non = \"s0.rp0\"\n"),
		  "topology.switch[1].on: root port s0.rp0 carries sw0 already (one link per "
		  "root port)");
	EXPECT_EQ(error_of("[[topology.nic]]\ncount = 2\non = \"s0.rp3\"\n"),
		  "topology.nic[0].on: root port s0.rp3 carries nic0 already (one link per "
		  "root port)");
}

TEST(TopologyErrors, Counts)
{
	const std::string sw = "[[topology.switch]]\n";
	EXPECT_EQ(error_of(sw + "[[topology.nic]]\ncount = 33\n"),
		  "topology.nic[0].count: 33 is out of range [1, 32]");
	EXPECT_EQ(error_of(sw + "[[topology.nic]]\ncount = 0\n"),
		  "topology.nic[0].count: 0 is out of range [1, 32]");
	EXPECT_EQ(error_of(sw + "[[topology.gpu]]\ncount = 20\n[[topology.gpu]]\ncount = 20\n"),
		  "topology.gpu: more than 32 gpus");
	EXPECT_EQ(error_of(sw), "topology.nic: missing: a node has 1 to 32 NICs");
	EXPECT_EQ(error_of(sw + "[[topology.nic]]\ncount = 2\n[[topology.gpu]]\n"),
		  "topology.gpu: 1 GPUs for 2 NICs: a node has one GPU per NIC");
	EXPECT_EQ(error_of("[[topology.socket]]\n[[topology.socket]]\n[[topology.socket]]\n"),
		  "topology.socket: 3 sockets: a node has one or two");
}

TEST(TopologyErrors, Links)
{
	const std::string sw = "[[topology.switch]]\n";
	EXPECT_EQ(error_of(sw + "[[topology.nic]]\nwidth = 3\n[[topology.gpu]]\n"),
		  "topology.nic[0].width: link width must be 1, 2, 4, 8 or 16");
	EXPECT_EQ(error_of(sw + "gen = 2\n"), "topology.switch[0].gen: 2 is out of range [3, 6]");
	EXPECT_EQ(error_of(sw + "width = 32\n"),
		  "topology.switch[0].width: 32 is out of range [1, 16]");
	EXPECT_EQ(error_of(sw + "speed = 32\n"),
		  "topology.switch[0].speed: unknown key (known: name, on, gen, width, gbps)");
}

TEST(TopologyErrors, Sockets)
{
	EXPECT_EQ(error_of("[[topology.socket]]\n[[topology.socket]]\nmem_base = \"4G\"\n"),
		  "topology.inter_socket: missing: two sockets need the link between them "
		  "(gbps, latency_ns)");
	EXPECT_EQ(error_of("[[topology.socket]]\n[[topology.socket]]\n"),
		  "topology.socket[1].mem_base: missing: the address where the second "
		  "socket's memory starts");
	EXPECT_EQ(error_of("[[topology.socket]]\nmem_base = 4096\n"),
		  "topology.socket[0].mem_base: the first socket's memory starts at 0");
	EXPECT_EQ(error_of("[topology.inter_socket]\ngbps = 100\nlatency_ns = 50\n"),
		  "topology.inter_socket: a node with one socket has no inter-socket link");
	EXPECT_EQ(error_of("[[topology.socket]]\n[[topology.socket]]\nmem_base = \"4G\"\n"
			   "[topology.inter_socket]\ngbps = 100\n"),
		  "topology.inter_socket.latency_ns: missing");
	EXPECT_EQ(error_of("[topology.socket]\nname = \"a\"\n"),
		  "topology.socket: expected [[topology.socket]] tables");
	EXPECT_EQ(error_of("topology = 1\n"), "topology: expected a table");
	EXPECT_EQ(error_of("[topology]\nsockets = 1\n"),
		  "topology.sockets: unknown key (known: socket, inter_socket, switch, nic, "
		  "gpu)");
}

// A QEMU node (Node::Shape::Qemu, dms_node_new) holds the trees QEMU can
// lay out for the guest (tools/devmemsim/topology.py): at most 16 root
// ports in use and 32 devices under a switch. The refusal comes before
// the node claims the process. Hosts without QEMU build the others
// (dms_node_new_topology).
TEST(Topology, QemuNodeRefusesWhatQemuCannotLayOut)
{
	std::string on_root_ports;
	for (int i = 0; i < 9; i++)
		on_root_ports += "[[topology.nic]]\non = \"s0.n" + std::to_string(i) +
				 "\"\n[[topology.gpu]]\non = \"s0.g" + std::to_string(i) + "\"\n";
	const std::pair<std::string, std::string> shapes[] = {
		{on_root_ports, "topology: 18 root ports in use; a QEMU node has at most 16 (a "
				"slot of its one PCIe root bus each): put devices under switches"},
		{"[[topology.switch]]\n[[topology.nic]]\ncount = 17\n[[topology.gpu]]\ncount = "
		 "17\n",
		 "topology: switch \"sw0\" has 34 devices; under QEMU a switch has at most 32 (a "
		 "downstream port each)"},
	};
	for (const auto &[shape, why] : shapes) {
		TempToml f(shape);
		NodeConfig cfg = load_config(f.path());
		try {
			Node n("node", cfg);
			ADD_FAILURE() << "built a node from " << shape;
		} catch (const ConfigError &e) {
			EXPECT_EQ(e.what(), why);
		}
	}
}
