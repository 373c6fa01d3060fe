"""SidecarTerminator rules without I/O: `termination` (when a Job-like pod's sidecars must go, and how)."""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
