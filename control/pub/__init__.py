"""PodUnavailableBudget without I/O: `budget` (arithmetic and admission decisions shared by webhook and
controller).
"""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
