"""SidecarTerminator rules without I/O: `termination` (when a Job-like pod's sidecars must go, and how)."""
