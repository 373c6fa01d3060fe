"""The apiserver's own defaulting for built-in kinds (the `SetDefaults_*` functions clients rely on)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.qos import compute_qos

_NOT_READY_TOLERATIONS = [
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]


def _pull_policy(image: str) -> str:
    name = image.rsplit("/", 1)[-1]
    if "@" in name:
        return "IfNotPresent"
    if ":" not in name or name.endswith(":latest"):
        return "Always"
    return "IfNotPresent"


def _container(c: dict[str, Any]) -> None:
    c.setdefault("imagePullPolicy", _pull_policy(c.get("image", "")))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for port in c.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for env in c.get("env") or []:
        ref = (env.get("valueFrom") or {}).get("fieldRef")
        if ref is not None:
            ref.setdefault("apiVersion", "v1")
    for probe in (c.get("livenessProbe"), c.get("readinessProbe"), c.get("startupProbe")):
        if isinstance(probe, dict):
            probe.setdefault("timeoutSeconds", 1)
            probe.setdefault("periodSeconds", 10)
            probe.setdefault("successThreshold", 1)
            probe.setdefault("failureThreshold", 3)
            _http_get(probe.get("httpGet"))
            if isinstance(probe.get("grpc"), dict):
                probe["grpc"].setdefault("service", "")
    for handler in ((c.get("lifecycle") or {}).get("postStart"), (c.get("lifecycle") or {}).get("preStop")):
        if isinstance(handler, dict):
            _http_get(handler.get("httpGet"))


def _http_get(action: Any) -> None:
    """SetDefaults_HTTPGetAction: every httpGet of a pod (probes and lifecycle hooks)."""
    if isinstance(action, dict):
        if not action.get("path"):
            action["path"] = "/"
        if not action.get("scheme"):
            action["scheme"] = "HTTP"


def pod_spec(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    if "serviceAccount" in spec and "serviceAccountName" not in spec:
        spec["serviceAccountName"] = spec["serviceAccount"]
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        _container(c)
    for c in spec.get("ephemeralContainers") or []:
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("imagePullPolicy", _pull_policy(c.get("image", "")))
    for vol in spec.get("volumes") or []:
        if "configMap" in vol:
            vol["configMap"].setdefault("defaultMode", 420)
        if "secret" in vol:
            vol["secret"].setdefault("defaultMode", 420)
        if "emptyDir" in vol and vol["emptyDir"] is None:
            vol["emptyDir"] = {}


def pod_scheme(obj: dict[str, Any]) -> None:
    """SetDefaults_Pod and SetDefaults_PodSpec alone: what decoding a pod fills in, on every write
    and again on the object a mutating webhook patched."""
    spec = obj.setdefault("spec", {})
    pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        resources = c.get("resources") or {}
        if resources.get("limits"):  # SetDefaults_Pod: a limit with no request is also the request
            requests = resources.setdefault("requests", {})
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)


def pod(obj: dict[str, Any]) -> None:
    """Pod creation defaults, including the admission plugins every cluster runs
    (DefaultTolerationSeconds; ServiceAccount and Priority need the store: `serviceaccounts.py`,
    `priority.py`)."""
    pod_scheme(obj)
    spec = obj["spec"]
    tolerations = spec.setdefault("tolerations", [])
    for default in _NOT_READY_TOLERATIONS:
        if not any(
            t.get("key") == default["key"] and t.get("effect", "NoExecute") in ("NoExecute", "")
            for t in tolerations
        ) and not any(t.get("operator") == "Exists" and not t.get("key") for t in tolerations):
            tolerations.append(dict(default))
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status.setdefault("qosClass", qos_class(spec))


def qos_class(spec: dict[str, Any]) -> str:
    """The pod's QoS class, as podStrategy.PrepareForCreate computes it from the final spec."""
    return compute_qos(spec)


def _template(obj: dict[str, Any]) -> None:
    template = (obj.get("spec") or {}).get("template")
    if isinstance(template, dict):
        template.setdefault("metadata", {})
        pod_spec(template.setdefault("spec", {}))


def deployment(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", "25%")
        ru.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(obj)


def replicaset(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj)


def statefulset(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _template(obj)


def daemonset(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", 1)
        ru.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(obj)


def job(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    spec.setdefault("manualSelector", False)
    template = spec.get("template") or {}
    uid = obj.get("metadata", {}).get("uid", "")
    if uid and not spec.get("manualSelector"):
        labels = {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": obj["metadata"]["name"],
            "controller-uid": uid,
            "job-name": obj["metadata"]["name"],
        }
        spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        template.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    _template(obj)


def cronjob(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)


def service(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))


def secret(obj: dict[str, Any]) -> None:
    """v1 Secret decoding: `stringData` is write-only; its values overwrite `data` (base64), as
    the v1 -> internal conversion does, so it is neither stored nor seen by webhooks."""
    string_data = obj.pop("stringData", None)
    if string_data is not None and not isinstance(string_data, dict):
        raise _undecodable("Secret", "stringData", string_data, "map[string]string")
    if string_data:
        data = obj.get("data") or {}
        for key, value in string_data.items():
            if value is not None and not isinstance(value, str):
                raise _undecodable("Secret", "stringData", value, "string")
            data[key] = base64.b64encode((value or "").encode()).decode()  # null decodes as ""
        obj["data"] = data
    obj.setdefault("type", "Opaque")


def _undecodable(kind: str, field: str, value: Any, go_type: str) -> StatusError:
    json_type = {bool: "bool", int: "number", float: "number", list: "array", dict: "object"}.get(
        type(value), "string"
    )
    return StatusError(
        400,
        "BadRequest",
        f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal {json_type} '
        f"into Go struct field {kind}.{field} of type {go_type}",
    )


def namespace(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]


def pdb(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if "minAvailable" not in spec and "maxUnavailable" not in spec:
        spec["minAvailable"] = 1


def webhook_configuration(obj: dict[str, Any]) -> None:
    for hook in obj.get("webhooks") or []:
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        hook.setdefault("namespaceSelector", {})
        hook.setdefault("objectSelector", {})
        hook.setdefault("timeoutSeconds", 10)
        if "reinvocationPolicy" in hook or obj.get("kind") == "MutatingWebhookConfiguration":
            hook.setdefault("reinvocationPolicy", "Never")
        svc = (hook.get("clientConfig") or {}).get("service")
        if isinstance(svc, dict):
            svc.setdefault("port", 443)
        for rule in hook.get("rules") or []:
            rule.setdefault("scope", "*")


def crd(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("conversion", {"strategy": "None"})
    names = spec.setdefault("names", {})
    if "kind" in names:
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")


def role_binding(obj: dict[str, Any]) -> None:
    """SetDefaults_Subject: users and groups belong to the RBAC group, service accounts to core."""
    for subject in obj.get("subjects") or []:
        if "apiGroup" not in subject and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = "rbac.authorization.k8s.io"


def priority_class(obj: dict[str, Any]) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def network_policy(obj: dict[str, Any]) -> None:
    """SetDefaults_NetworkPolicy: Ingress is always a policy type, Egress when egress rules exist."""
    spec = obj.setdefault("spec", {})
    for rule in [*(spec.get("ingress") or []), *(spec.get("egress") or [])]:
        for port in rule.get("ports") or []:
            port.setdefault("protocol", "TCP")
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", *(["Egress"] if spec.get("egress") else [])]


def persistent_volume_claim(obj: dict[str, Any]) -> None:
    """SetDefaults_PersistentVolumeClaim(Spec): Filesystem volume mode, phase Pending until bound."""
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    status.setdefault("phase", "Pending")


def storage_class(obj: dict[str, Any]) -> None:
    """SetDefaults_StorageClass: volumes are deleted with their claims and bound at once."""
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def node(obj: dict[str, Any]) -> None:
    return None


CREATE_DEFAULTS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    ("", "pods"): pod,
    ("", "services"): service,
    ("", "secrets"): secret,
    ("", "namespaces"): namespace,
    ("", "persistentvolumeclaims"): persistent_volume_claim,
    ("storage.k8s.io", "storageclasses"): storage_class,
    ("apps", "deployments"): deployment,
    ("apps", "replicasets"): replicaset,
    ("apps", "statefulsets"): statefulset,
    ("apps", "daemonsets"): daemonset,
    ("batch", "jobs"): job,
    ("batch", "cronjobs"): cronjob,
    ("policy", "poddisruptionbudgets"): pdb,
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): webhook_configuration,
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): webhook_configuration,
    ("apiextensions.k8s.io", "customresourcedefinitions"): crd,
    ("rbac.authorization.k8s.io", "rolebindings"): role_binding,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): role_binding,
    ("scheduling.k8s.io", "priorityclasses"): priority_class,
    ("networking.k8s.io", "networkpolicies"): network_policy,
}

SCHEME_DEFAULTS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    **CREATE_DEFAULTS,
    ("", "pods"): pod_scheme,
}
"""The defaults of decoding alone (no admission plugin): run on updates and on webhook-patched objects."""
