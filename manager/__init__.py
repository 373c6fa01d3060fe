"""kruise.manager: the leader-elected controller process (``kruise-manager``)."""
