# SPDX-License-Identifier: MIT
"""Medians, spread and the rule that decides whether a row has a winner.

Spread: with 5 or more samples the interquartile range (the middle half of
the samples, robust to one disturbed run), with fewer the full range
(min-max). A row has a winner only when the lead exceeds the spread: the
allocator with the lowest median wins if its spread lies entirely below
every other allocator's spread (its high end is below their low ends).
Otherwise the row is a tie between it and every allocator whose spread
reaches down into its own. A cell needs MIN_SAMPLES samples to take part:
one or two runs say nothing about noise.
"""
import statistics
from dataclasses import dataclass

MIN_SAMPLES = 3
IQR_FROM = 5


@dataclass
class Spread:
    median: float
    low: float  # q1 or min
    high: float  # q3 or max
    kind: str  # "IQR" or "range"
    n: int


def spread(values):
    values = sorted(values)
    median = statistics.median(values)
    if len(values) >= IQR_FROM:
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
        return Spread(median, q1, q3, "IQR", len(values))
    return Spread(median, values[0], values[-1], "range", len(values))


@dataclass
class Verdict:
    winner: str = ""  # set when one allocator's lead exceeds the spread
    tied: tuple = ()  # set when the best is within the spread of others
    why_none: str = ""  # set when neither can be said


def judge(spreads):
    """spreads: {name: Spread} for one row and metric (lower is better)."""
    ranked = {name: s for name, s in spreads.items() if s.n >= MIN_SAMPLES}
    if len(ranked) < 2:
        return Verdict(why_none="fewer than two allocators with "
                                f"{MIN_SAMPLES}+ good samples")
    best = min(ranked, key=lambda name: ranked[name].median)
    rivals = [name for name, s in ranked.items()
              if name != best and s.low <= ranked[best].high]
    if not rivals:
        return Verdict(winner=best)
    rivals.sort(key=lambda name: ranked[name].median)
    return Verdict(tied=(best, *rivals))
