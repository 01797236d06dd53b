"""A network namespace with a tap device the host side of a test owns:
the VMM attaches to the tap by name (thpvm -n mode=tap,tapif=, QEMU
-netdev tap,ifname=), and the test's own sockets and pings run in the
namespace, so packets really cross the host kernel's stack and nothing
leaks onto the machine's network."""
import os
import shutil
import subprocess

HOST_IP = "10.0.2.2"
GUEST_IP = "10.0.2.15"
TAP = "tgtap0"


def usable():
    """None if namespaces and taps can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, taps)"
    if not shutil.which("ip"):
        return "needs the ip command (apt-get install iproute2)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    return None


class NetNS:
    def __init__(self):
        self.name = f"thpvm-test-{os.getpid()}"

    def sh(self, *cmd, **kw):
        return subprocess.run(["ip", "netns", "exec", self.name] +
                              list(cmd), check=True, capture_output=True,
                              text=True, **kw)

    def prefix(self):
        """Command prefix that runs a program in the namespace."""
        return ["ip", "netns", "exec", self.name]

    def __enter__(self):
        subprocess.run(["ip", "netns", "add", self.name], check=True,
                       capture_output=True)
        try:
            self.sh("ip", "link", "set", "lo", "up")
            self.sh("ip", "tuntap", "add", "dev", TAP, "mode", "tap",
                    "vnet_hdr")
            self.sh("ip", "addr", "add", HOST_IP + "/24", "dev", TAP)
            self.sh("ip", "link", "set", TAP, "up")
        except Exception:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        subprocess.run(["ip", "netns", "delete", self.name],
                       capture_output=True)
