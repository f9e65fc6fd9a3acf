"""Paired ratios of interleaved runs, shared by the fidelity scripts in bench/.

A fidelity script runs two tools pair by pair and reports, per pairing, the median of the paired
ratios with a distribution-free confidence interval for that median, so a table shows how far the
rounds it took can resolve a difference: a median of 1.06 whose interval runs from 0.93 to 1.15
says nothing about a 5 % band.
"""
import math
import statistics

LEVEL = 0.95


def ratios(numerators, denominators):
    return [a / b for a, b in zip(numerators, denominators) if b]


def median_interval(values, level=LEVEL):
    """(low, high, coverage) for the median of `values`: the order statistics x(k) and x(n-k+1)
    with the largest k whose exact binomial coverage 1 - 2 P(B <= k-1), B ~ Bin(n, 1/2), is at
    least `level` (Hollander & Wolfe's sign-test interval). With too few values for `level`, the
    range, with the coverage it has."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("no values")
    k, tail = 1, 1 / 2 ** n  # tail = P(B <= k-1)
    while k + 1 <= n - k:
        tail_next = tail + math.comb(n, k) / 2 ** n
        if 1 - 2 * tail_next < level:
            break
        k, tail = k + 1, tail_next
    return xs[k - 1], xs[n - k], 1 - 2 * tail


def ratio_header(label="ratio"):
    return f"{label + ' med':>10} {'ci low':>7} {'ci high':>7} {'cover':>5} {'min':>6} {'max':>6}"


def ratio_columns(values):
    """The median of the ratios, its interval and coverage, and the range, as table columns."""
    if not values:
        return f"{'-':>10} {'-':>7} {'-':>7} {'-':>5} {'-':>6} {'-':>6}"
    low, high, coverage = median_interval(values)
    return (f"{statistics.median(values):>10.3f} {low:>7.3f} {high:>7.3f} {coverage:>5.0%}"
            f" {min(values):>6.3f} {max(values):>6.3f}")


def _check():
    # Exact coverages: n = 8 gives the range (1 - 2/256 = 99.2 %); n = 12 gives x(3)..x(10)
    # (1 - 2 * 79/4096 = 96.1 %); n = 5 cannot reach 95 % (the range covers 93.75 %).
    assert median_interval(range(1, 9)) == (1, 8, 1 - 2 / 256)
    low, high, cover = median_interval(range(1, 13))
    assert (low, high) == (3, 10) and abs(cover - (1 - 2 * 79 / 4096)) < 1e-12
    assert median_interval(range(1, 6)) == (1, 5, 1 - 2 / 32)
    low, high, cover = median_interval(range(100))
    assert (low, high) == (39, 60) and cover >= LEVEL


if __name__ == "__main__":
    _check()
    print("pairs.py: checks pass")
