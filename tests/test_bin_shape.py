"""Numeric values decoded inside their bins by a linear density whose slope follows the
bins' densities (generate/decode.py: bin_shape, inside), not evenly."""
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.generate.decode import bin_shape, decode, inside


def test_a_linear_density_keeps_its_slope_in_every_inner_bin():
    lo, width = np.arange(8.0), np.ones(8)
    counts = 10.0 + 3.0 * (lo + 0.5)  # density 10 + 3x: slope 3 on both sides
    l = bin_shape(lo, width, counts)
    np.testing.assert_allclose(l[1:-1], 1 - 3.0 / (2 * counts[1:-1]), rtol=1e-12)
    # an end bin takes its one neighbour's slope where the density falls towards its end
    # (the lowest bin here), else it is flat (the highest: it rises to the range's end)
    np.testing.assert_allclose(l[0], 1 - 3.0 / (2 * counts[0]), rtol=1e-12)
    assert l[-1] == 1.0


def test_a_peak_is_flat_and_a_falling_tail_thins_outward():
    l = bin_shape(np.arange(5.0), np.ones(5), np.array([1.0, 5, 9, 5, 1]))
    assert l[2] == 1.0  # a local extremum: no slope (the limiter)
    # k = 1: left 4, right 4 -> slope 4, l = (5 - 2) / 5; k = 3 falls: l = (5 + 2) / 5
    np.testing.assert_allclose(l[[1, 3]], [0.6, 1.4])
    assert l[4] == 2.0 and l[0] == 0.0  # both ends thin outward: clipped at 0 density
    # widths count: the same counts over bins twice as wide have half the density slope
    wide = bin_shape(np.arange(0.0, 10, 2), np.full(5, 2.0), np.array([1.0, 5, 9, 5, 1]))
    np.testing.assert_allclose(wide, l)


def test_empty_and_one_value_bins_are_flat_and_steer_no_neighbour():
    # a bin holding one value (width 0: a repeated edge) with most records, beside bins
    # of an even density: they stay flat, its mass takes no part in their slopes
    lo = np.array([0.0, 0.0, 1.0, 2.0, 3.0])
    width = np.array([0.0, 1.0, 1.0, 1.0, 1.0])
    l = bin_shape(lo, width, np.array([700.0, 10, 20, 30, 0]))
    assert l[0] == 1.0 and l[4] == 1.0  # one value; empty
    assert l[1] == 0.5  # its slope from its right (10) alone: (10 - 10 / 2) / 10
    assert l[3] == 1.0  # a rise, then a fall to the empty bin: a peak, flat
    assert (bin_shape(np.arange(3.0), np.ones(3), np.zeros(3)) == 1.0).all()


@pytest.mark.parametrize("l", [0.0, 0.3, 1.0, 1.7, 2.0])
def test_inside_inverts_the_linear_cdf(l):
    u = (np.arange(1, 2000) - 0.5) / 2000
    x = inside(u, np.full(len(u), l))
    assert ((x > 0) & (x <= 1)).all()
    np.testing.assert_allclose(l * x + (1 - l) * x * x, u, rtol=0, atol=1e-12)  # G(x) = u
    if l == 1.0:  # a flat bin draws exactly as before
        assert np.array_equal(x, u)


def test_a_falling_column_decodes_below_its_bins_middles():
    schema = load_schema({"columns": [
        {"name": "price", "type": "numeric", "edges": [0, 10, 20, 40, 80, 160]},
        {"name": "n", "type": "numeric", "integer": True, "min": 0, "max": 99,
         "bins": 5}]})
    counts = [4000, 2000, 1000, 500, 250]  # each bin's density a quarter of the last's
    codes = np.repeat(np.arange(5), counts).astype(np.uint8)
    out = decode([codes, codes], schema, seed=3)
    for name, lo, width in (("price", [0, 10, 20, 40, 80], [10, 10, 20, 40, 80]),
                            ("n", [0, 20, 40, 60, 80], [20] * 5)):
        frac = (out[name].to_numpy() - np.repeat(lo, counts)) / np.repeat(width, counts)
        means = pd.Series(frac).groupby(codes).mean().to_numpy()
        even = 0.5 if name == "price" else 0.475  # integers: floor(u * 20) / 20
        assert (means[1:] < even - 0.02).all(), (name, means)
        # the lowest bin rises towards its end of the range: flat, as evenly
        assert abs(means[0] - even) < 0.02, (name, means)
        assert (frac >= 0).all() and (frac < 1).all()


def test_an_integer_bin_of_one_value_steers_no_neighbour():
    # a common value's own bin [0, 1) beside an integer column's log-spaced bins: as a
    # decimal's repeated edge, it takes no part in its neighbours' slopes (a review:
    # the bin below it was pushed to l = 0, the one above took its slope)
    schema = load_schema({"columns": [{"name": "income", "type": "numeric", "integer": True,
                                       "edges": [-9600, 0, 1, 1000, 10000, 100000]}]})
    col = schema["income"]
    counts = [140, 3400, 3000, 2500, 900]
    codes = np.repeat(np.arange(5), counts).astype(np.uint8)
    out = decode([codes], schema, seed=3)["income"].to_numpy()
    lo, top = col.integer_bins()
    frac = (out - lo[codes]) / (top - lo)[codes]
    means = pd.Series(frac).groupby(codes).mean().to_numpy()
    assert abs(means[0] - 0.5) < 0.02  # its one neighbour a single value: flat
    assert (out[codes == 1] == 0).all()
    assert abs(means[2] - 0.5) < 0.02  # [1, 1000): rises, then falls: a peak, flat


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_bins_too_narrow_or_wide_for_their_densities_decode_flat_and_quietly(scale):
    # a probe's column of 0 .. 1e-300: the densities overflowed, and numpy's "overflow
    # encountered in divide" reached the user; each bin is drawn evenly instead
    lo = np.arange(8) * scale
    counts = np.array([5, 40, 80, 60, 30, 10, 4, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        l = bin_shape(lo, np.full(8, scale), counts)
    assert np.isfinite(l).all() and ((l >= 0) & (l <= 2)).all(), l
