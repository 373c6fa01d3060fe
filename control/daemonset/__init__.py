"""Advanced DaemonSet plans (pure; the controller in kruise.manager performs the I/O)."""
