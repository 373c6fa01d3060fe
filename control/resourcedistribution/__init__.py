"""ResourceDistribution planning without I/O: `distribution` (target namespaces, the copy to write,
status).
"""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
