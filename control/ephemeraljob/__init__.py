"""EphemeralJob planning without I/O: `injection` (targets, pod states, who gets the containers next,
status).
"""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
