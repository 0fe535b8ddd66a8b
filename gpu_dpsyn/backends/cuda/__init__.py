"""CUDA sources (*.cu) and the CuPy glue that loads them."""
