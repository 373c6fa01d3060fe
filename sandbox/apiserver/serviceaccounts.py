"""Service accounts the way a kube-apiserver 1.36 cluster provides them.

Two parts, both needed before any pod can start in a real cluster:

- the ServiceAccount admission plugin (`admit_pod`): on pod CREATE it fills in
  `serviceAccountName: default`, refuses a pod whose service account does not exist, copies the
  account's `imagePullSecrets` when the pod names none, and — unless the pod (first) or the account
  says `automountServiceAccountToken: false` — adds the `kube-api-access-<5 random>` projected
  volume (bound token, `kube-root-ca.crt`, namespace via the downward API) and mounts it read-only
  at `/var/run/secrets/kubernetes.io/serviceaccount` in every init and app container that does not
  already mount something there. Mirror pods are left alone. It runs before mutating webhooks, as
  the plugin order of kube-apiserver puts it, so webhooks see the mounted pod.
- what kube-controller-manager keeps in every namespace (`namespace_objects`): the `default`
  ServiceAccount (serviceaccount-controller) and the `kube-root-ca.crt` ConfigMap with the
  cluster CA (root-ca-cert-publisher).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from kruise.sandbox.apiserver.errors import StatusError

DEFAULT_NAME = "default"
VOLUME_PREFIX = "kube-api-access-"
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# The bound token's lifetime the plugin asks for: one hour plus 7 s, the marker kube-apiserver
# uses to extend legacy-looking tokens while warning about their use.
TOKEN_EXPIRATION_SECONDS = 3607
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's SimpleNameGenerator alphabet
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
    "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
    "distributions of Kubernetes clusters."
)


def token_volume(name: str) -> dict[str, Any]:
    """The projected volume the plugin adds, field for field as kube-apiserver writes it."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
        },
    }


def _should_automount(account: dict[str, Any], spec: dict[str, Any]) -> bool:
    """The pod's own setting wins, then the account's; mounting is the default."""
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if account.get("automountServiceAccountToken") is not None:
        return bool(account["automountServiceAccountToken"])
    return True


def _mount_token(spec: dict[str, Any], rng: random.Random) -> None:
    volumes = spec.get("volumes") or []
    existing = next((v["name"] for v in volumes if v.get("name", "").startswith(VOLUME_PREFIX)), "")
    name = existing or VOLUME_PREFIX + "".join(rng.choices(_NAME_CHARS, k=5))
    needed = False
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        mounts = container.get("volumeMounts") or []
        if any(m.get("mountPath") == MOUNT_PATH for m in mounts):
            continue  # a mount of its own at the path keeps the token out of this container
        container["volumeMounts"] = [*mounts, {"name": name, "readOnly": True, "mountPath": MOUNT_PATH}]
        needed = True
    if needed and not existing:
        spec["volumes"] = [*volumes, token_volume(name)]


def admit_pod(
    pod: dict[str, Any],
    get_account: Callable[[str, str], dict[str, Any] | None],
    rng: random.Random | None = None,
) -> None:
    """The plugin's Admit for a pod CREATE; raises 403 Forbidden when the account is missing."""
    meta = pod.setdefault("metadata", {})
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return
    spec = pod.setdefault("spec", {})
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = DEFAULT_NAME
    spec["serviceAccount"] = spec["serviceAccountName"]  # the deprecated alias v1 always reports
    namespace, account_name = meta.get("namespace", ""), spec["serviceAccountName"]
    account = get_account(namespace, account_name)
    if account is None:
        raise StatusError(
            403,
            "Forbidden",
            f'pods "{meta.get("name", "")}" is forbidden: error looking up service account '
            f'{namespace}/{account_name}: serviceaccount "{account_name}" not found',
            {"name": meta.get("name", ""), "kind": "pods"},
        )
    if _should_automount(account, spec):
        _mount_token(spec, rng or random.Random())
    if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [{"name": s.get("name", "")} for s in account["imagePullSecrets"]]


def namespace_objects(namespace: str, ca_pem: bytes | None) -> list[tuple[tuple[str, str], dict[str, Any]]]:
    """What kube-controller-manager creates in each namespace: (storage key, object) pairs."""
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": DEFAULT_NAME, "namespace": namespace},
    }
    root_ca = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": ROOT_CA_CONFIGMAP,
            "namespace": namespace,
            "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION},
        },
        "data": {"ca.crt": (ca_pem or b"").decode()},
    }
    return [(("", "serviceaccounts"), account), (("", "configmaps"), root_ca)]
