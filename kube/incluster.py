"""Where a process running in a pod finds its apiserver and credentials (client-go's InClusterConfig).

A pod gets ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` from the kubelet and its service
account's bound token, the cluster CA and its namespace as files in
``/var/run/secrets/kubernetes.io/serviceaccount``. A container runtime that cannot mount files at
that fixed place (a process run directly on the host, such as the sandbox's process runtime) says
where the directory really is with ``KUBERNETES_SERVICE_ACCOUNT_DIR``; nothing else differs, and in
a real cluster that variable is simply absent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
SERVICE_ACCOUNT_DIR_ENV = "KUBERNETES_SERVICE_ACCOUNT_DIR"
HOST_ENV = "KUBERNETES_SERVICE_HOST"
PORT_ENV = "KUBERNETES_SERVICE_PORT"


class NotInCluster(Exception):
    """The process does not run in a pod (or its pod lacks the service account files)."""


@dataclass(frozen=True)
class InClusterPaths:
    """The apiserver address and the service account files of this pod."""

    host: str
    port: str
    directory: Path

    @property
    def token_file(self) -> Path:
        return self.directory / "token"

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def namespace_file(self) -> Path:
        return self.directory / "namespace"

    @property
    def server(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}"


def running_in_pod(environ: Mapping[str, str] | None = None) -> bool:
    """As client-go decides: both service variables are set and non-empty."""
    env = os.environ if environ is None else environ
    return bool(env.get(HOST_ENV)) and bool(env.get(PORT_ENV))


def in_cluster_paths(environ: Mapping[str, str] | None = None) -> InClusterPaths:
    """The pod's apiserver and service account directory; ``NotInCluster`` names what is missing."""
    env = os.environ if environ is None else environ
    if not running_in_pod(env):
        raise NotInCluster(
            f"unable to load in-cluster configuration, {HOST_ENV} and {PORT_ENV} must be defined"
        )
    directory = Path(env.get(SERVICE_ACCOUNT_DIR_ENV) or SERVICE_ACCOUNT_DIR)
    paths = InClusterPaths(env[HOST_ENV], env[PORT_ENV], directory)
    for required in (paths.token_file, paths.ca_file):
        if not required.is_file():
            raise NotInCluster(f"unable to load in-cluster configuration: open {required}: no such file")
    return paths
