"""ImageListPullJob planning without I/O: `childjobs` (one ImagePullJob per listed image, their status)."""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
