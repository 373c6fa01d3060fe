"""A real node for the sandbox: containerd + runc + CNI bridge per simulated node, fed by a local registry.

Everything here drives Debian's binaries (``containerd``, ``runc``, ``containernetworking-plugins``,
``docker-registry``) as root; ``prereqs.check`` says what is missing before anything starts, so the
sandbox never half-starts. Images are stand-ins built from ``busybox-static`` (see ``images``).
"""
