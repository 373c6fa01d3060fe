"""EnhancedLivenessProbe without I/O: `probecontext` (liveness probes moved into the container-probe-context
annotation).
"""

__all__: list[str] = []  # no planned phase: its rules are called directly (docs/where-things-go.md)
