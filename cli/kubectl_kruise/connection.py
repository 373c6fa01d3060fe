"""kubectl's connection globals for a plugin: `--kubeconfig`, `--context`, `-n/--namespace`.

kubectl hands a plugin its arguments untouched, so the plugin reads the same kubeconfig the same
way: the flag, else `KUBECONFIG` (a `:`-separated list, merged), else `~/.kube/config`; the
namespace from the flag, else the chosen context's namespace, else `default`. Inside a pod with
none of those (no flag, no `KUBECONFIG`, no `~/.kube/config`), it uses the pod's service
account and namespace, as kubectl does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from kubernetes_asyncio.config import ConfigException
from kubernetes_asyncio.config.kube_config import list_kube_config_contexts

from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.kube.client import Client

USER_AGENT = "kubectl-kruise"
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
NO_CONFIGURATION = (
    "invalid configuration: no configuration has been provided, "
    "try setting KUBERNETES_MASTER environment variable"
)


class ConfigError(PluginError):
    """The kubeconfig cannot be used; the text says which file or context."""


@dataclass(frozen=True)
class ConnectionOptions:
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    request_timeout: float = 0.0  # seconds per request; 0 keeps the client's default

    def _client_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"user_agent": USER_AGENT}
        if self.request_timeout > 0:
            options["request_timeout"] = self.request_timeout
        return options

    def kubeconfig_path(self) -> str:
        return self.kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")

    def in_cluster(self) -> bool:
        explicit = self.kubeconfig or os.environ.get("KUBECONFIG")
        return (
            not explicit
            and not os.path.exists(self.kubeconfig_path())
            and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        )

    def check_files(self) -> None:
        """kubectl's refusals for a kubeconfig that is not there, before any library gets to
        guess: a named file must exist; otherwise at least one candidate must."""
        if self.kubeconfig:
            if not os.path.exists(self.kubeconfig):
                raise ConfigError(f"stat {self.kubeconfig}: no such file or directory")
            return
        if self.in_cluster():
            return
        candidates = (
            os.environ.get("KUBECONFIG", "").split(os.pathsep) if os.environ.get("KUBECONFIG") else []
        )
        candidates = candidates or [self.kubeconfig_path()]
        if not any(path and os.path.exists(path) for path in candidates):
            raise ConfigError(NO_CONFIGURATION)

    def resolve_namespace(self, service_account_namespace: str = SERVICE_ACCOUNT_NAMESPACE) -> str:
        self.check_files()
        if self.namespace:
            return self.namespace
        if self.in_cluster():
            try:
                with open(service_account_namespace, encoding="utf-8") as file:
                    return file.read().strip() or "default"
            except OSError:
                return "default"
        try:
            contexts, current = list_kube_config_contexts(self.kubeconfig_path())
        except (ConfigException, OSError) as err:
            raise ConfigError(f"invalid configuration: {err}") from None
        chosen = None
        if self.context:
            chosen = next((c for c in contexts if c.get("name") == self.context), None)
            if chosen is None:
                raise ConfigError(f"context was not found for specified context: {self.context}")
        else:
            chosen = current
        return ((chosen or {}).get("context") or {}).get("namespace") or "default"

    async def client(self) -> Client:
        try:
            if self.in_cluster():
                return Client.in_cluster(**self._client_options())
            return await Client.from_kubeconfig(
                self.kubeconfig_path(), self.context, **self._client_options()
            )
        except (ConfigException, OSError) as err:
            raise ConfigError(f"invalid configuration: {err}") from None
