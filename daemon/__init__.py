"""kruise.daemon: the per-node agent (``kruise-daemon``) that acts through the CRI."""
