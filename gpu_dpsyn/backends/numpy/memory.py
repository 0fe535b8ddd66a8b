"""Host memory a sample may still take: the machine's free memory, bounded by the room
left in the process's cgroup (a container's --memory, a systemd MemoryMax), which the
machine's figure does not see: inside a 1 GiB container it passed samples of several GiB,
and the kernel then killed the process."""
from __future__ import annotations

import os

# (limit, usage) of cgroup v2, then v1, as a container sees its own (Dask reads these too)
CGROUP_FILES = [("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                 "/sys/fs/cgroup/memory/memory.usage_in_bytes")]
UNLIMITED = 1 << 60  # v1 writes "no limit" as a page-rounded 2^63 - 1


MEMINFO = "/proc/meminfo"


def host_free() -> int | None:
    """The machine's memory available to new allocations: Linux's MemAvailable, which
    counts the page cache the kernel can drop (free pages alone, sysconf's, refused a
    census table's run at 18.2 GiB with 21.9 GiB available), else MemFree (kernels
    before 3.14), else sysconf's free pages (no /proc: macOS)."""
    try:
        with open(MEMINFO) as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        for key in ("MemAvailable", "MemFree"):
            if key in fields:
                return int(fields[key].split()[0]) * 1024  # written in kB
    except (OSError, ValueError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def cgroup_room() -> int | None:
    """Bytes the cgroup's limit leaves above its usage; None without a limit."""
    for limit_file, usage_file in CGROUP_FILES:
        try:
            with open(limit_file) as f:
                limit = f.read().strip()
            if limit == "max":
                return None
            with open(usage_file) as f:
                usage = int(f.read().strip())
            limit = int(limit)
        except (OSError, ValueError):
            continue
        return None if limit >= UNLIMITED else max(0, limit - usage)
    return None


def free_memory() -> int | None:
    """Bytes of memory available now (None if unknown)."""
    free, room = host_free(), cgroup_room()
    return room if free is None else free if room is None else min(free, room)
