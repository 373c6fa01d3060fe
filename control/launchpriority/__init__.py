"""Container launch priority without I/O: `barriers` (which barrier key each container waits for)."""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
