"""JSON shapes of the core Kubernetes types kruise-py keeps as plain dicts (pod templates, pods, claim
templates, node selector terms, probes, object metadata).

Why: those embedded objects are schemaless in the CRDs (as upstream's), and a mutating webhook sees a
request before kube-apiserver's schema check, so a string where a list belongs reaches code that
walks the dict. Upstream decodes into Go structs first and answers a 400 naming the field when that
fails; checking the shape once, up front, gives the same answer here instead of an AttributeError
deep in defaulting. Only types are checked (not values: those are the validators' job), and only for
fields kruise reads or that a user commonly writes; other fields pass through untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Shape = Any
"""A type name ("string", "integer", "boolean", "quantity", "int-or-string", "object"), a struct
(`{"fields": {...}}`), a map (`{"values": shape}`) or a list (`{"items": shape}`)."""

STR, INT, BOOL = "string", "integer", "boolean"
QUANTITY, INT_OR_STR, OBJECT = "quantity", "int-or-string", "object"


def struct(**fields: Shape) -> dict[str, Any]:
    return {"fields": fields}


def map_of(values: Shape) -> dict[str, Any]:
    return {"values": values}


def list_of(items: Shape) -> dict[str, Any]:
    return {"items": items}


STR_MAP = map_of(STR)
STR_LIST = list_of(STR)

OBJECT_META = struct(
    name=STR, generateName=STR, namespace=STR, uid=STR, resourceVersion=STR, deletionTimestamp=STR,
    labels=STR_MAP, annotations=STR_MAP, finalizers=STR_LIST,
    ownerReferences=list_of(struct(apiVersion=STR, kind=STR, name=STR, uid=STR, controller=BOOL)),
)  # fmt: skip
LABEL_SELECTOR = struct(
    matchLabels=STR_MAP,
    matchExpressions=list_of(struct(key=STR, operator=STR, values=STR_LIST)),
)
NODE_SELECTOR_REQUIREMENTS = list_of(struct(key=STR, operator=STR, values=STR_LIST))
NODE_SELECTOR_TERM = struct(
    matchExpressions=NODE_SELECTOR_REQUIREMENTS, matchFields=NODE_SELECTOR_REQUIREMENTS
)
PREFERRED_TERM = struct(weight=INT, preference=NODE_SELECTOR_TERM)
TOLERATION = struct(key=STR, operator=STR, value=STR, effect=STR, tolerationSeconds=INT)
HANDLER = struct(
    exec=struct(command=STR_LIST),
    httpGet=struct(path=STR, port=INT_OR_STR, host=STR, scheme=STR,
                   httpHeaders=list_of(struct(name=STR, value=STR))),
    tcpSocket=struct(port=INT_OR_STR, host=STR),
    grpc=struct(port=INT, service=STR),
    sleep=struct(seconds=INT),
)  # fmt: skip
PROBE = struct(
    **HANDLER["fields"], initialDelaySeconds=INT, periodSeconds=INT, timeoutSeconds=INT,
    successThreshold=INT, failureThreshold=INT, terminationGracePeriodSeconds=INT,
)  # fmt: skip
RESOURCES = struct(limits=map_of(QUANTITY), requests=map_of(QUANTITY), claims=list_of(struct(name=STR)))
CONTAINER = struct(
    name=STR, image=STR, command=STR_LIST, args=STR_LIST, workingDir=STR, imagePullPolicy=STR,
    ports=list_of(struct(name=STR, containerPort=INT, hostPort=INT, protocol=STR, hostIP=STR)),
    env=list_of(struct(name=STR, value=STR, valueFrom=OBJECT)),
    envFrom=list_of(struct(prefix=STR, configMapRef=OBJECT, secretRef=OBJECT)),
    resources=RESOURCES, resizePolicy=list_of(struct(resourceName=STR, restartPolicy=STR)),
    volumeMounts=list_of(struct(name=STR, mountPath=STR, subPath=STR, readOnly=BOOL, mountPropagation=STR)),
    livenessProbe=PROBE, readinessProbe=PROBE, startupProbe=PROBE,
    lifecycle=struct(postStart=HANDLER, preStop=HANDLER),
    securityContext=OBJECT, restartPolicy=STR, stdin=BOOL, tty=BOOL,
    terminationMessagePath=STR, terminationMessagePolicy=STR,
)  # fmt: skip
VOLUME = struct(
    name=STR, emptyDir=OBJECT, hostPath=OBJECT, configMap=OBJECT, secret=OBJECT,
    persistentVolumeClaim=struct(claimName=STR, readOnly=BOOL), projected=OBJECT, downwardAPI=OBJECT,
)  # fmt: skip
POD_SPEC = struct(
    containers=list_of(CONTAINER), initContainers=list_of(CONTAINER), ephemeralContainers=list_of(CONTAINER),
    volumes=list_of(VOLUME), restartPolicy=STR, nodeSelector=STR_MAP, nodeName=STR,
    serviceAccountName=STR, serviceAccount=STR, schedulerName=STR, priorityClassName=STR, priority=INT,
    hostNetwork=BOOL, hostPID=BOOL, hostIPC=BOOL, shareProcessNamespace=BOOL,
    automountServiceAccountToken=BOOL, enableServiceLinks=BOOL, setHostnameAsFQDN=BOOL,
    affinity=OBJECT, tolerations=list_of(TOLERATION), readinessGates=list_of(struct(conditionType=STR)),
    terminationGracePeriodSeconds=INT, activeDeadlineSeconds=INT, dnsPolicy=STR, dnsConfig=OBJECT,
    securityContext=OBJECT, imagePullSecrets=list_of(struct(name=STR)), hostname=STR, subdomain=STR,
    runtimeClassName=STR, preemptionPolicy=STR, overhead=map_of(QUANTITY), os=OBJECT,
    topologySpreadConstraints=list_of(OBJECT), schedulingGates=list_of(struct(name=STR)),
    hostAliases=list_of(OBJECT), resourceClaims=list_of(OBJECT),
)  # fmt: skip
POD_TEMPLATE = struct(metadata=OBJECT_META, spec=POD_SPEC)
POD = struct(apiVersion=STR, kind=STR, metadata=OBJECT_META, spec=POD_SPEC, status=OBJECT)
CLAIM_TEMPLATE = struct(
    metadata=OBJECT_META,
    spec=struct(accessModes=STR_LIST, storageClassName=STR, volumeMode=STR, volumeName=STR,
                resources=RESOURCES, selector=LABEL_SELECTOR, dataSource=OBJECT),
)  # fmt: skip
EVICTION = struct(
    apiVersion=STR, kind=STR, metadata=OBJECT_META,
    deleteOptions=struct(gracePeriodSeconds=INT, dryRun=STR_LIST, propagationPolicy=STR),
)  # fmt: skip
# A UnitedDeployment subset's workload spec (any of its four kinds): the fields every kind shares
WORKLOAD_SPEC = struct(
    replicas=INT, selector=LABEL_SELECTOR, template=POD_TEMPLATE, volumeClaimTemplates=list_of(CLAIM_TEMPLATE)
)
# A ResourceDistribution's Secret or ConfigMap
DISTRIBUTED = struct(
    apiVersion=STR, kind=STR, metadata=OBJECT_META, type=STR, immutable=BOOL,
    data=STR_MAP, stringData=STR_MAP, binaryData=STR_MAP,
)  # fmt: skip
# What the deletion-protection webhooks read of a stored object (built-in or Kruise)
WORKLOAD = struct(metadata=OBJECT_META, spec=struct(replicas=INT))
CRD = struct(
    metadata=OBJECT_META,
    spec=struct(group=STR, scope=STR, names=struct(plural=STR, kind=STR),
                versions=list_of(struct(name=STR, served=BOOL, storage=BOOL))),
)  # fmt: skip
METADATA_ONLY = struct(metadata=OBJECT_META)

_KINDS: dict[str, tuple[type, ...]] = {
    STR: (str,), INT: (int,), BOOL: (bool,), OBJECT: (dict,),
    QUANTITY: (int, float, str), INT_OR_STR: (int, str),
}  # fmt: skip
_WORDS = {
    STR: "a string", INT: "an integer", BOOL: "a boolean", OBJECT: "an object",
    QUANTITY: "a quantity (a string or a number)", INT_OR_STR: "an integer or a string",
}  # fmt: skip


def mismatches(value: Any, shape: Shape, path: str = "") -> Iterator[tuple[str, Any, str]]:
    """(field path, value, what it must be) for every field of `value` whose JSON type is not the
    shape's, outermost first. A null field reads as absent, as Go's decoder leaves it at its zero value
    (`without_nulls` drops it); a null list item or map value is a mismatch, since the code reading it
    would meet None where it expects a value."""
    if value is None:
        if path.endswith("]"):
            yield path, value, "must not be null"
        return
    if isinstance(shape, str):
        fits = isinstance(value, _KINDS[shape]) and not (isinstance(value, bool) and shape != BOOL)
        if shape == INT and fits and not -(2**63) <= value < 2**63:
            yield path, value, "must be an integer that fits in 64 bits"
        elif not fits:
            yield path, value, f"must be {_WORDS[shape]}"
        return
    if "items" in shape:
        if not isinstance(value, list):
            yield path, value, "must be a list"
            return
        for i, item in enumerate(value):
            yield from mismatches(item, shape["items"], f"{path}[{i}]")
        return
    if not isinstance(value, dict):
        yield path, value, "must be an object"
        return
    if "values" in shape:
        for key, item in value.items():
            for where, wrong, rule in mismatches(item, shape["values"], f"{path}[{key}]"):
                if shape["values"] == QUANTITY:  # a quantity at its key, as apimachinery's resource checks
                    yield where, wrong, rule
                else:  # a string map's entry at the map, as apimachinery reports a label
                    yield path, {key: wrong}, rule
        return
    for key, sub in shape["fields"].items():
        if key in value:
            yield from mismatches(value[key], sub, f"{path}.{key}" if path else key)


def first_mismatch(value: Any, shape: Shape, path: str = "") -> tuple[str, Any, str] | None:
    return next(mismatches(value, shape, path), None)


def without_nulls(value: Any, shape: Shape) -> Any:
    """`value` without its null fields (absent, as Go's decoder leaves them at their zero values), so
    code reading it with `.get(key, {})` meets no None; unchanged values are returned as they are."""
    if isinstance(shape, str) or value is None:
        return value
    if "items" in shape:
        if not isinstance(value, list):
            return value
        items = [without_nulls(item, shape["items"]) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if not isinstance(value, dict) or "values" in shape:
        return value
    out = value
    for key, sub in shape["fields"].items():
        if key not in value:
            continue
        item = value[key]
        kept = None if item is None else without_nulls(item, sub)
        if item is None:
            out = {k: v for k, v in out.items() if k != key}
        elif kept is not item:
            out = {**out, key: kept}
    return out
