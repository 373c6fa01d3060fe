"""ResourceDistribution planning without I/O: `copies` (target namespaces, the copy to write, status)."""
