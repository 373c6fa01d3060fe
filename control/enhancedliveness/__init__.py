"""EnhancedLivenessProbe without I/O: `probecontext` (liveness probes moved into the container-probe-context
annotation).
"""
