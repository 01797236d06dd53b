"""What the host sees of a VMM process: its guest RAM's resident and huge
pages, its other memory, its threads' CPU time, and PMD splits."""
import os
import re
import shutil
import subprocess

from common import RunError


def thp_split_pmd():
    """System-wide count of huge PMDs split (other processes count too)."""
    with open("/proc/vmstat") as f:
        for line in f:
            k, v = line.split()
            if k == "thp_split_pmd":
                return int(v)
    return 0


def mappings(pid):
    """Each mapping of a process as {"size", "rss", "huge"} in bytes, from
    /proc/PID/smaps (huge: AnonHugePages)."""
    out = []
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
            if m:
                out.append({"size": int(m.group(2), 16) -
                            int(m.group(1), 16), "rss": 0, "huge": 0})
            elif line.startswith("Rss:") and out:
                out[-1]["rss"] = int(line.split()[1]) * 1024
            elif line.startswith("AnonHugePages:") and out:
                out[-1]["huge"] = int(line.split()[1]) * 1024
    return out


def guest_ram(pid):
    """A VMM's largest mapping, its guest RAM (see mappings)."""
    return max(mappings(pid), key=lambda m: m["size"])


def guest_ram_usage(pid, regions=1):
    """(AnonHugePages, Rss) of a VMM's guest RAM, in bytes: its largest
    mapping, or its `regions` largest (boot RAM and a virtio-mem
    region are two)."""
    maps = sorted(mappings(pid), key=lambda m: m["size"])[-regions:]
    return sum(m["huge"] for m in maps), sum(m["rss"] for m in maps)


def vmm_overhead(p):
    """Resident memory of a serving VMM other than its guest RAM, in
    bytes; stops the VMM."""
    try:
        maps = mappings(p.pid)
        return sum(m["rss"] for m in maps) - \
            max(maps, key=lambda m: m["size"])["rss"]
    finally:
        p.kill()
        p.wait()


def is_vcpu_thread(comm):
    # thpvm names its vCPU threads vcpuN, QEMU "CPU N/KVM", kvmtool
    # kvm-vcpu-N.
    return (re.fullmatch(r"vcpu\d+", comm) is not None or
            re.fullmatch(r"CPU \d+/KVM", comm) is not None or
            re.fullmatch(r"kvm-vcpu-\d+", comm) is not None)


def thread_cpu_ns(task):
    """CPU time of one thread in ns: schedstat's run time (exact) where
    the kernel has it, else utime + stime in clock ticks."""
    try:
        with open(f"{task}/schedstat") as f:
            return int(f.read().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        pass
    with open(f"{task}/stat") as f:
        # Fields after the parenthesised comm, which may hold spaces.
        rest = f.read().rsplit(")", 1)[1].split()
    ticks = int(rest[11]) + int(rest[12])       # utime, stime
    return ticks * 10**9 // os.sysconf("SC_CLK_TCK")


def vmm_cpu_ns(pid):
    """(all, non-vCPU) host CPU time of the VMM's threads in ns. All of it
    is what the host pays for the VM, the guest's work included; the
    non-vCPU threads are where thpvm serves balloon requests. QEMU 7.2
    serves them in the vCPU thread here (its main thread gained 2 ms of
    CPU over a 424 MiB inflate), so only the first compares across
    VMMs."""
    total = dev = vcpus = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        task = f"/proc/{pid}/task/{tid}"
        try:
            with open(f"{task}/comm") as f:
                vcpu = is_vcpu_thread(f.read().strip())
            ns = thread_cpu_ns(task)
        except (FileNotFoundError, ProcessLookupError):
            continue                            # thread ended meanwhile
        total += ns
        if vcpu:
            vcpus += 1
        else:
            dev += ns
    if not vcpus:
        # Unnamed vCPU threads would be counted as the device's.
        raise RunError(f"no vCPU thread found among process {pid}'s")
    return total, dev


def snapshot(pid, regions=1):
    huge, rss = guest_ram_usage(pid, regions)
    cpu, dev = vmm_cpu_ns(pid)
    return {"huge": huge, "rss": rss, "cpu_ns": cpu, "dev_ns": dev,
            "splits": thp_split_pmd()}


def threads_report(pid):
    """Where each thread of a process that seems hung is: its name, state
    and kernel wait channel and stack (root reads those), then its user
    stacks from gdb where gdb is installed. Read before the process is
    killed, so a hang in CI leaves a trace."""
    lines = [f"threads of process {pid}:"]
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError as e:
        return f"process {pid}: {e}"
    for tid in tids:
        task = f"/proc/{pid}/task/{tid}"
        fields = []
        for name in ("comm", "wchan", "stack"):
            try:
                with open(f"{task}/{name}") as f:
                    fields.append(f.read().strip())
            except OSError as e:
                fields.append(f"({e.strerror})")
        try:
            with open(f"{task}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            state = "?"
        comm, wchan, stack = fields
        lines.append(f"  {tid} {comm} state={state} wchan={wchan}")
        lines += ["    " + l for l in stack.splitlines()]
    if shutil.which("gdb"):
        try:
            r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                                "-ex", "thread apply all bt"],
                               capture_output=True, text=True,
                               errors="replace", timeout=60)
            lines += [l for l in r.stdout.splitlines()
                      if l.startswith(("Thread", "#"))]
        except subprocess.TimeoutExpired:
            lines.append("gdb did not finish in 60 s")
    return "\n".join(lines)
