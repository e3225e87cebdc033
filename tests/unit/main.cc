// SPDX-License-Identifier: MIT
// The tests' own main(): libsystemc.so also exports main() (it calls
// sc_main), so the executable must define one rather than take gtest_main's.
#include <gtest/gtest.h>

int main(int argc, char **argv)
{
	::testing::InitGoogleTest(&argc, argv);
	return RUN_ALL_TESTS();
}
