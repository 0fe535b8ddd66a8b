"""Scale-out on Dask (dask.distributed; dask-cuda for one GPU per worker).

* Measuring (counting.py): each partition of the private table is read, checked and
  encoded by a worker, which keeps the codes; every histogram the fit asks for is the
  sum of exact per-partition histograms (the backend's own), reduced in a tree.  Only
  counts reach the client, which charges the accountant and draws the noise there, as
  in memory: the noisy marginals and the ledger are those of the in-memory fit.
* Sampling (sampling.py): GUM is post-processing, so n rows are synthesized as
  independent batches, one task each, every batch fitted to an exact integer share of
  every target (splitting.py); each task writes one Parquet part under a fixed name.
* reading.py turns a path (file, directory, glob) into a dask DataFrame; workers.py
  holds what a worker process keeps (its backend) and reports (its memory);
  cluster.py starts the client the CLI uses.
"""
