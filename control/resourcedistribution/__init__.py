"""ResourceDistribution planning without I/O: `distribution` (target namespaces, the copy to write,
status).
"""
