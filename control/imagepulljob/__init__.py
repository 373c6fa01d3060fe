"""ImagePullJob planning without I/O: `nodeimages` (target nodes, progress, status) and `pullsecrets` (copies
of its pull Secrets for kruise-daemon).
"""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
