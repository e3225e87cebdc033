"""One wall clock for the cluster: the programs that measure a node's
offset from node0 and step its clock."""

# One wall clock for the cluster. A node's CLOCK_REALTIME starts from the
# RTC's whole seconds at boot, so two nodes differ by up to a second (their
# TSCs then agree within a ppm). Tests that time packets across the link need
# them to agree: so_txtime.py's sender and its remote receiver both sleep
# until one wall-clock instant taken on node0, and the receiver checks each
# arrival against it within 8 ms. After boot every other node's clock is set
# to node0's over the data link: node0 sends CLOCK_ROUNDS numbered UDP
# requests, the node answers each with its number and its clock, and the
# answer with the shortest round trip gives the offset (wrong by at most half
# that round trip; a late answer to an earlier request is not used).
CLOCK_PORT = 47999
CLOCK_ROUNDS = 30
CLOCK_SERVER = """\
import socket, time

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("{addr}", {port}))
s.settimeout(30)
while True:
    data, peer = s.recvfrom(16)
    if data == b"done":
        break
    s.sendto(data + b" %d" % time.clock_gettime_ns(time.CLOCK_REALTIME), peer)
"""
CLOCK_CLIENT = """\
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.5)
best = None
for n in range({rounds}):
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
    try:
        s.sendto(b"%d" % n, ("{addr}", {port}))
        seq, theirs = s.recvfrom(64)[0].split()
        while int(seq) != n:  # a late answer to an earlier request
            seq, theirs = s.recvfrom(64)[0].split()
    except (socket.timeout, ConnectionRefusedError):
        time.sleep(0.1)  # the server is not listening yet
        continue
    t2 = time.clock_gettime_ns(time.CLOCK_REALTIME)
    theirs = int(theirs)
    if best is None or t2 - t0 < best[0]:
        best = (t2 - t0, theirs - (t0 + t2) // 2)
if {last}:
    s.sendto(b"done", ("{addr}", {port}))
print(*(best or ("none", "none")))
"""
CLOCK_STEP = ("python3 -c 'import time; "
              "time.clock_settime_ns(time.CLOCK_REALTIME, time.clock_gettime_ns(time.CLOCK_REALTIME) - {offset})'")
