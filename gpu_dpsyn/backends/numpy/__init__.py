"""NumPy implementation of the backend operations (see gpu_dpsyn.backends)."""
