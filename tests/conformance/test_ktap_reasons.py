"""The reason devmemsim kselftest gives a failed case: the exception the
case raised, as ksft printed its traceback ("# Exception| ..."), taken from
the traceback's structure rather than from the exception's name. The lines
below are ksft_run's own output (Linux 7.3.4's net/lib/py, paths shortened):
a bare `raise Exception(...)` (GenerateTraffic's "did not ramp up", "Waiting
for client to stop") used to come out as "Exception|", which hid why
rss_ctx.py failed in a full run."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from devmemsim import ktap  # noqa: E402

KSFT_OUTPUT = """\
TAP version 13
1..4
# Exception| Traceback (most recent call last):
# Exception|   File "/sel/net/lib/py/ksft.py", line 420, in ksft_run
# Exception|     func(*args)
# Exception|   File "/sel/drivers/net/lib/py/load.py", line 97, in __init__
# Exception|     raise Exception("iperf3 traffic did not ramp up")
# Exception| Exception: iperf3 traffic did not ramp up
# Exception| \n\
not ok 1 rss_ctx.test_rss_context
# Exception| Traceback (most recent call last):
# Exception|   File "/sel/net/lib/py/ksft.py", line 420, in ksft_run
# Exception|     func(*args)
# Exception|   File "/sel/net/lib/py/utils.py", line 134, in process
# Exception|     raise CmdExitFailure("Command failed", self)
# Exception| net.lib.py.utils.CmdExitFailure: Command failed
# Exception| CMD: ethtool -L eth1 combined 4
# Exception|   EXIT: 1
# Exception|   STDERR: Error: channel counts too low
# Exception| \n\
not ok 2 rss_drv.resize
# Exception| Traceback (most recent call last):
# Exception|   File "<string>", line 9, in test_chained
# Exception| KeyError: 'k'
# Exception| \n\
# Exception| During handling of the above exception, another exception occurred:
# Exception| \n\
# Exception| Traceback (most recent call last):
# Exception|   File "/sel/drivers/net/lib/py/load.py", line 141, in _wait_client_stopped
# Exception|     raise Exception(f"Waiting for client to stop timed out after {timeout}s")
# Exception| Exception: Waiting for client to stop timed out after 5s
# Exception| \n\
not ok 3 rss_ctx.test_chained
# Check failed 2 != 0 traffic on inactive queues
# Exception| Traceback (most recent call last):
# Exception| subprocess.TimeoutExpired: Command 'iperf3' timed out after 15 seconds
# Exception| \n\
not ok 4 rss_ctx.test_checked
"""


class FailureReasons(unittest.TestCase):
    def reasons(self):
        parser = ktap.Parser(0)
        cases = [parser.feed(line) for line in KSFT_OUTPUT.splitlines()]
        return [c.reason for c in cases if c]

    def test_bare_exception_and_its_message(self):
        self.assertEqual(self.reasons()[0], "Exception: iperf3 traffic did not ramp up")

    def test_message_lines_of_a_command_failure(self):
        self.assertEqual(self.reasons()[1], "net.lib.py.utils.CmdExitFailure: Command failed; "
                         "CMD: ethtool -L eth1 combined 4; EXIT: 1; STDERR: Error: channel counts too low")

    def test_last_traceback_of_a_chain(self):
        self.assertEqual(self.reasons()[2], "Exception: Waiting for client to stop timed out after 5s")

    def test_check_failed_wins(self):
        self.assertEqual(self.reasons()[3], "Check failed 2 != 0 traffic on inactive queues")

    def test_without_a_traceback_line(self):
        """Kept notes that lost the traceback's first line: the first
        unindented line of what is left."""
        notes = ["# Exception|     raise Exception('x')", "# Exception| subprocess.TimeoutExpired: late",
                 "# Exception| "]
        self.assertEqual(ktap.failure_reason(notes), "subprocess.TimeoutExpired: late")

    def test_json_summary_keeps_a_failed_cases_output(self):
        """A failed case's own output (its notes before the result line)
        reaches the JSON summary, as it does the KTAP and JUnit files; a
        passed case carries none."""
        parser = ktap.Parser(0)
        lines = ["TAP version 13", "1..2", "# STATS: received=777 wire=1024", "not ok 1 gro.test_order",
                 "# chatter", "ok 2 gro.test_data"]
        cases = [c for c in (parser.feed(line) for line in lines) if c]
        doc = ktap.summary([ktap.FileResult("drivers/net:gro.py", status="fail", cases=cases)], {})
        failed, passed = doc["files"][0]["cases"]
        self.assertIn("STATS: received=777 wire=1024", failed["log"])
        self.assertNotIn("log", passed)


if __name__ == "__main__":
    unittest.main(verbosity=2)
