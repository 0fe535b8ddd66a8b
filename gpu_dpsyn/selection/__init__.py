"""Which marginals to measure, chosen from noisy scores or a public table: post-processing
(nothing here reads private records)."""
