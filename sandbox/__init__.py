"""kruise.sandbox: a local Kubernetes stand-in (API emulator + cluster simulator).

It imports nothing else of kruise: it is a generic Kubernetes, and kruise-py runs on it
exactly as it would on a real cluster.
"""
