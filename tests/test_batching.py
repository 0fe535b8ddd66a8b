"""core.batching.capped_runs: the runs that bound a batch's memory (measuring's
histograms, a call's noise elements)."""
from gpu_dpsyn.core.batching import capped_runs


def test_runs_keep_order_stay_within_the_cap_and_a_larger_item_goes_alone():
    sizes = [3, 4, 9, 2, 2, 2, 0, 5]
    runs = list(capped_runs(iter(range(len(sizes))), lambda i: sizes[i], 6))
    assert runs == [[0], [1], [2], [3, 4, 5, 6], [7]]
    assert [i for r in runs for i in r] == list(range(len(sizes)))  # each once, in order
    assert list(capped_runs([], len, 6)) == []
    assert list(capped_runs(["ab", "c", "de"], len, 3)) == [["ab", "c"], ["de"]]
