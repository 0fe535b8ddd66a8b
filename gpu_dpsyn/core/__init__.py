"""What every stage shares: the data types passed between stages and small utilities
(counter-based RNG, exact sums, sorting, argument checks, progress bars)."""
