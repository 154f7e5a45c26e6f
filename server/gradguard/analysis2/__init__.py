"""Static analysis, second engine: Python's ``ast`` and per-function summaries."""
