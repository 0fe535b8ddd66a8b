"""The memory a sample may take is bounded by the process's cgroup (a container's
--memory, a systemd MemoryMax), not only by the machine's free memory: inside a 1 GiB
container the host's free memory let a sample of several GiB pass the check, and the
kernel then killed the process, after the fit had spent the budget."""
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.backends.numpy import memory
from gpu_dpsyn.errors import DataError

GIB = 2 ** 30


def _cgroup(tmp_path, monkeypatch, limit: str, usage: str, version=2):
    names = ("memory.max", "memory.current") if version == 2 else \
        ("memory.limit_in_bytes", "memory.usage_in_bytes")
    (tmp_path / names[0]).write_text(limit + "\n")
    (tmp_path / names[1]).write_text(usage + "\n")
    monkeypatch.setattr(memory, "CGROUP_FILES",
                        [(str(tmp_path / names[0]), str(tmp_path / names[1]))],
                        raising=False)
    monkeypatch.setattr(memory, "host_free", lambda: 64 * GIB, raising=False)


@pytest.mark.parametrize("version", [1, 2])
def test_a_sample_past_the_cgroups_room_is_refused_before_the_fit(tmp_path, monkeypatch,
                                                                  version):
    _cgroup(tmp_path, monkeypatch, str(GIB), str(GIB // 2), version)
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False)
    schema = {"columns": {"a": {"type": "categorical", "values": [0, 1, 2]}}}
    with pytest.raises(DataError, match=r"needs about .* only 512\.0 MiB is free"):
        syn.check_sample(10 ** 7, schema)  # 81 bytes a row: about 0.8 GiB
    syn.check_sample(10 ** 6, schema)  # about 80 MiB: fits


@pytest.mark.parametrize("limit", ["max", "9223372036854771712"])
def test_no_cgroup_limit_is_the_machines_free_memory(tmp_path, monkeypatch, limit):
    _cgroup(tmp_path, monkeypatch, limit, str(GIB))
    assert memory.free_memory() == 64 * GIB


def test_unreadable_cgroup_files_are_no_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(memory, "CGROUP_FILES", [(str(tmp_path / "no"), str(tmp_path / "x"))],
                        raising=False)
    monkeypatch.setattr(memory, "host_free", lambda: 3 * GIB, raising=False)
    assert memory.free_memory() == 3 * GIB


def test_sample_to_in_this_process_sizes_its_batches_from_the_processs_limit(monkeypatch):
    """Without a client, the batch size came from the machine's total memory: in a 1 GiB
    container on a 64 GiB machine, batches of 2^22 rows (over 1 GiB of work each)."""
    import distributed.system
    import pandas as pd
    from gpu_dpsyn.distributed import sampling
    df = pd.DataFrame({"a": [0, 1, 2] * 100})
    schema = {"columns": {"a": {"type": "categorical", "values": [0, 1, 2]}}}
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False, seed=0).fit(df, schema)
    import psutil
    monkeypatch.setattr(distributed.system, "memory_limit", lambda: GIB)  # the cgroup's
    monkeypatch.setattr(psutil, "virtual_memory", lambda: type("M", (), {"total": 64 * GIB}))
    rows = sampling.default_batch_rows(syn.model, None, 10 ** 8)
    host_row = 1 + sampling.WORK_BYTES_PER_ROW + sampling.OUTPUT_BYTES_PER_CELL
    assert rows * host_row <= sampling.MEMORY_SHARE * GIB


def test_sample_to_in_this_process_refuses_a_batch_that_cannot_fit(tmp_path, monkeypatch):
    """sample(n) is refused before allocating when n rows cannot fit; sample_to(path, n,
    batch_rows=n) without a client ran the same one batch unchecked."""
    import pandas as pd
    df = pd.DataFrame({"a": [0, 1, 2] * 100})
    schema = {"columns": {"a": {"type": "categorical", "values": [0, 1, 2]}}}
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False, seed=0).fit(df, schema)
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: 2 ** 20)  # 1 MiB: 10^5 rows of 129 bytes do not fit
    with pytest.raises(DataError, match=r"needs about .* only 1\.0 MiB is free"):
        syn.sample(100_000)
    with pytest.raises(DataError, match=r"needs about .* only 1\.0 MiB is free"):
        syn.sample_to(tmp_path / "out", 200_000, batch_rows=100_000)
    assert not (tmp_path / "out").exists()
    syn.sample_to(tmp_path / "small", 20_000, batch_rows=5_000)  # 0.6 MiB a batch: fits


@pytest.mark.parametrize("columns,measured", [(5, 268), (15, 670)])
def test_the_sample_check_counts_the_table_written(monkeypatch, columns, measured):
    """The check before a sample counted its codes and GUM's work (85 bytes a row for 5
    columns), not the decoded table nor its write: sample + write of flights columns on
    the command line peaked at 157-268 bytes a row above the fitted process for 5
    columns and 335-670 for 15 (200k and 500k rows, Parquet and CSV).  Free memory just
    under the worst of those is refused."""
    schema = {"columns": {f"c{i}": {"type": "categorical", "values": [0, 1, 2]}
                          for i in range(columns)}}
    n = 200_000
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: n * measured)
    with pytest.raises(DataError, match=r"^sample\(200,000\) needs about"):
        Synthesizer(1.0, 1e-9, backend="cpu", progress=False).check_sample(n, schema)


def test_the_adaptive_rounds_check_counts_no_decoded_table(monkeypatch):
    """The rounds' records S are fitted, never decoded nor written: their check had taken
    48 bytes a column more a record (the sample's output) since that was added."""
    from gpu_dpsyn.backends import get_backend
    from gpu_dpsyn.generate import sample as sampling
    from gpu_dpsyn.measure import rounds
    from gpu_dpsyn.selection import triples
    domain = [5] * 40
    need = triples.FIT_ROWS * (sum(sampling.code_dtype(d).itemsize for d in domain)
                               + sampling.WORK_BYTES_PER_ROW)
    backend = get_backend("cpu")
    monkeypatch.setattr(type(backend), "free_memory", lambda self: need + 1)
    rounds.check_memory(backend, domain)
    with pytest.raises(DataError, match="sample"):  # a sample's check counts its output
        sampling.check_memory(backend, triples.FIT_ROWS, domain, False)
    monkeypatch.setattr(type(backend), "free_memory", lambda self: need - 1)
    with pytest.raises(DataError, match="adaptive rounds"):
        rounds.check_memory(backend, domain)


def test_the_machines_free_memory_counts_the_page_cache_it_can_drop(tmp_path, monkeypatch):
    """The check read free pages alone (sysconf's SC_AVPHYS_PAGES, MemFree): a curator's
    40-column census table (21,768 rows) was synthesized, then refused a minute later
    with the same command ('needs about 18.6 GiB of CPU memory, only 18.2 GiB is free')
    on a machine whose MemAvailable, the kernel's figure for what new allocations can
    take without swapping (page cache it can drop included), was 21.9 GiB."""
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:       24000000 kB\nMemFree:         1048576 kB\n"
                    "MemAvailable:    8388608 kB\nBuffers:          100000 kB\n")
    monkeypatch.setattr(memory, "MEMINFO", str(info), raising=False)
    assert memory.host_free() == 8 * GIB
    info.write_text("MemTotal:       24000000 kB\nMemFree:         1048576 kB\n")  # old kernels
    assert memory.host_free() == GIB
