"""PersistentPodState planning without I/O: `podstates` (records per pod, generated objects, the webhook's
injection).
"""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
