"""Synthetic records fitted to the targets: GUM, the neighbour shuffle, the Gibbs sweep,
the polish, and decoding to a table (post-processing)."""
