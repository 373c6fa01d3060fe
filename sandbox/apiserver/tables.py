"""meta.k8s.io/v1 Table output: what `kubectl get` prints, computed server-side as the apiserver does."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from kruise.sandbox.apiserver.resources import ResourceType
from kruise.sandbox.apiserver.selectors import format_label_selector


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < 0:
        return "<invalid>"
    if s < 60 * 2:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rem = s % 60
        return f"{minutes}m{rem}s" if rem else f"{minutes}m"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rem = (s % 3600) // 60
        return f"{hours}h{rem}m" if rem else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rem = hours % 24
        return f"{hours // 24}d{rem}h" if rem else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def age(obj: dict[str, Any], now: datetime | None = None) -> str:
    ts = (obj.get("metadata") or {}).get("creationTimestamp")
    if not ts:
        return "<unknown>"
    created = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return human_duration(((now or datetime.now(UTC)) - created).total_seconds())


# client-go's parser reads a field up to the next terminator (space . , [ ] $ @ { }); a backslash makes
# the next character literal and is then dropped, so `.labels.a\.b/c` names the label key `a.b/c`.
_FIELD = re.compile(r"^\.((?:\\.|[^\\\s.,\[\]$@{}])*)")
_FILTER = re.compile(r"^\[\?\(@\.([\w.]+)\s*==\s*['\"]([^'\"]*)['\"]\)\]")


def json_path(obj: Any, path: str) -> list[Any]:
    """The subset of kubectl JSONPath printer columns use: `.a.b`, `.a\\.b`, `[0]`, `[*]`, `[?(@.k=="v")]`."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    values = [obj]
    rest = path.lstrip("$")
    while rest:
        if rest.startswith("."):
            m = _FIELD.match(rest)
            if not m or not m.group(1):
                break
            name, rest = m.group(1).replace("\\", ""), rest[m.end() :]
            nxt = []
            for v in values:
                if isinstance(v, dict):
                    if name == "*":
                        nxt.extend(v.values())
                    elif name in v:
                        nxt.append(v[name])
            values = nxt
        elif m := _FILTER.match(rest):
            rest = rest[m.end() :]
            keys, want = m.group(1).split("."), m.group(2)
            nxt = []
            for v in values:
                for item in v if isinstance(v, list) else []:
                    got: Any = item
                    for k in keys:
                        got = got.get(k) if isinstance(got, dict) else None
                    if got is not None and str(got) == want:
                        nxt.append(item)
            values = nxt
        elif m := re.match(r"^\[(\*|-?\d+)\]", rest):
            rest = rest[m.end() :]
            nxt = []
            for v in values:
                if isinstance(v, list):
                    if m.group(1) == "*":
                        nxt.extend(v)
                    elif -len(v) <= int(m.group(1)) < len(v):
                        nxt.append(v[int(m.group(1))])
            values = nxt
        else:
            break
    return values


def _crd_cell(obj: dict[str, Any], column: dict[str, Any]) -> Any:
    found = json_path(obj, column.get("jsonPath", ""))
    if not found:
        return None
    value = found[0]
    kind = column.get("type")
    if column.get("type") == "date" and isinstance(value, str):
        try:
            created = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            return human_duration((datetime.now(UTC) - created).total_seconds())
        except ValueError:
            return value
    if kind in ("integer", "number", "boolean") or isinstance(value, dict | list):
        return value
    return str(value) if not isinstance(value, str) else value


def _col(
    name: str, type_: str = "string", priority: int = 0, fmt: str = "", desc: str = ""
) -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": desc, "priority": priority}


NAME = _col("Name", fmt="name", desc="Name must be unique within a namespace.")
AGE = _col(
    "Age", desc="CreationTimestamp is a timestamp representing the server time when this object was created."
)

CREATED_AT = _col(
    "Created At",
    "date",
    desc="CreationTimestamp is a timestamp representing the server time when this object was created.",
)


def _pod_row(o: dict[str, Any]) -> list[Any]:
    spec, status = o.get("spec") or {}, o.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(s.get("restartCount", 0) for s in statuses)
    reason = status.get("reason") or status.get("phase") or "Pending"
    for s in statuses:
        state = s.get("state") or {}
        if "waiting" in state and state["waiting"].get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state:
            reason = state["terminated"].get("reason") or "Completed"
    if (o.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    conds = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    gates_text = (
        f"{sum(1 for g in gates if conds.get(g.get('conditionType')) == 'True')}/{len(gates)}"
        if gates
        else "<none>"
    )
    return [
        o["metadata"]["name"],
        f"{ready}/{len(spec.get('containers') or [])}",
        reason,
        restarts,
        age(o),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


def _workload_images(o: dict[str, Any]) -> tuple[str, str]:
    containers = ((((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []
    return ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)


def _deploy_row(o: dict[str, Any]) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _workload_images(o)
    return [
        o["metadata"]["name"],
        f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        st.get("updatedReplicas", 0),
        st.get("availableReplicas", 0),
        age(o),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


def _controller_name(o: dict[str, Any]) -> str:
    """``statefulset.apps/web``: the controller's lowercased Kind.group and name, or ``<none>``."""
    for ref in o["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            kind = f"{ref.get('kind', '')}.{group}" if group else ref.get("kind", "")
            return f"{kind.lower()}/{ref.get('name', '')}"
    return "<none>"


_ACCESS_MODES = {
    "ReadWriteOnce": "RWO",
    "ReadOnlyMany": "ROX",
    "ReadWriteMany": "RWX",
    "ReadWriteOncePod": "RWOP",
}


def _pvc_row(o: dict[str, Any]) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else st.get("phase", "")
    bound = bool(spec.get("volumeName"))
    storage_class = spec.get("storageClassName") or (o["metadata"].get("annotations") or {}).get(
        "volume.beta.kubernetes.io/storage-class"
    )
    return [
        o["metadata"]["name"],
        phase,
        spec.get("volumeName", ""),
        ((st.get("capacity") or {}).get("storage", "")) if bound else "",
        ",".join(_ACCESS_MODES.get(m, m) for m in st.get("accessModes") or []) if bound else "",
        storage_class or "<unset>",
        spec.get("volumeAttributesClassName") or "<unset>",
        age(o),
        spec.get("volumeMode") or "<unset>",
    ]


def _node_row(o: dict[str, Any]) -> list[Any]:
    st = o.get("status") or {}
    ready = next((c for c in st.get("conditions") or [] if c.get("type") == "Ready"), None)
    text = "Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")
    if (o.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    labels = (o.get("metadata") or {}).get("labels") or {}
    roles = (
        ",".join(sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/")))
        or "<none>"
    )
    info = st.get("nodeInfo") or {}
    addrs = {a.get("type"): a.get("address") for a in st.get("addresses") or []}
    return [
        o["metadata"]["name"],
        text,
        roles,
        age(o),
        info.get("kubeletVersion", ""),
        addrs.get("InternalIP", "<none>"),
        addrs.get("ExternalIP", "<none>"),
        info.get("osImage", "<unknown>"),
        info.get("kernelVersion", "<unknown>"),
        info.get("containerRuntimeVersion", "<unknown>"),
    ]


def _event_row(o: dict[str, Any]) -> list[Any]:
    inv = o.get("involvedObject") or o.get("regarding") or {}
    last = o.get("lastTimestamp") or o.get("eventTime") or (o.get("metadata") or {}).get("creationTimestamp")
    last_age = age({"metadata": {"creationTimestamp": last[:19] + "Z"}}) if last else "<unknown>"
    return [
        last_age,
        o.get("type", ""),
        o.get("reason", ""),
        f"{(inv.get('kind') or '').lower()}/{inv.get('name', '')}",
        o.get("message") or o.get("note", ""),
    ]


def _created_at(o: dict[str, Any]) -> str:
    return (o.get("metadata") or {}).get("creationTimestamp", "")


def _binding_row(o: dict[str, Any]) -> list[Any]:
    """RoleBinding/ClusterRoleBinding: the role as Kind/name, subjects split by kind (wide)."""
    ref = o.get("roleRef") or {}
    subjects = o.get("subjects") or []

    def of(kind: str) -> str:
        return ", ".join(
            f"{s.get('namespace', '')}/{s.get('name', '')}" if kind == "ServiceAccount" else s.get("name", "")
            for s in subjects
            if s.get("kind") == kind
        )

    return [
        o["metadata"]["name"],
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        age(o),
        of("User"),
        of("Group"),
        of("ServiceAccount"),
    ]


def _ingress_row(o: dict[str, Any]) -> list[Any]:
    spec = o.get("spec") or {}
    hosts = [r.get("host") or "*" for r in spec.get("rules") or []] or ["*"]
    lbs = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    address = ",".join(i.get("ip") or i.get("hostname") or "" for i in lbs)
    ports = "80, 443" if spec.get("tls") else "80"
    return [
        o["metadata"]["name"],
        spec.get("ingressClassName") or "<none>",
        ",".join(hosts),
        address,
        ports,
        age(o),
    ]


def _selector_text(sel: dict[str, Any] | None) -> str:
    labels = (sel or {}).get("matchLabels") or {}
    exprs = (sel or {}).get("matchExpressions") or []
    if not labels and not exprs:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


_BINDING_COLUMNS = [
    NAME,
    _col("Role"),
    AGE,
    _col("Users", priority=1),
    _col("Groups", priority=1),
    _col("ServiceAccounts", priority=1),
]


BUILTIN_TABLES: dict[tuple[str, str], tuple[list[dict[str, Any]], Any]] = {
    ("", "pods"): (
        [
            NAME,
            _col("Ready"),
            _col("Status"),
            _col("Restarts", "string"),
            AGE,
            _col("IP", priority=1),
            _col("Node", priority=1),
            _col("Nominated Node", priority=1),
            _col("Readiness Gates", priority=1),
        ],
        _pod_row,
    ),
    ("apps", "deployments"): (
        [
            NAME,
            _col("Ready"),
            _col("Up-to-date", "integer"),
            _col("Available", "integer"),
            AGE,
            _col("Containers", priority=1),
            _col("Images", priority=1),
            _col("Selector", priority=1),
        ],
        _deploy_row,
    ),
    ("", "nodes"): (
        [
            NAME,
            _col("Status"),
            _col("Roles"),
            AGE,
            _col("Version"),
            _col("Internal-IP", priority=1),
            _col("External-IP", priority=1),
            _col("OS-Image", priority=1),
            _col("Kernel-Version", priority=1),
            _col("Container-Runtime", priority=1),
        ],
        _node_row,
    ),
    ("", "namespaces"): (
        [NAME, _col("Status"), AGE],
        lambda o: [o["metadata"]["name"], (o.get("status") or {}).get("phase", ""), age(o)],
    ),
    ("", "configmaps"): (
        [NAME, _col("Data", "integer"), AGE],
        lambda o: [o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}), age(o)],
    ),
    ("", "secrets"): (
        [NAME, _col("Type"), _col("Data", "integer"), AGE],
        lambda o: [o["metadata"]["name"], o.get("type", ""), len(o.get("data") or {}), age(o)],
    ),
    ("", "serviceaccounts"): (
        [NAME, _col("Secrets", "integer"), AGE],
        lambda o: [o["metadata"]["name"], len(o.get("secrets") or []), age(o)],
    ),
    ("", "events"): (
        [_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Message")],
        _event_row,
    ),
    ("apps", "replicasets"): (
        [NAME, _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"), AGE],
        lambda o: [
            o["metadata"]["name"],
            (o.get("spec") or {}).get("replicas", 0),
            (o.get("status") or {}).get("replicas", 0),
            (o.get("status") or {}).get("readyReplicas", 0),
            age(o),
        ],
    ),
    ("apps", "statefulsets"): (
        [NAME, _col("Ready"), AGE, _col("Containers", priority=1), _col("Images", priority=1)],
        lambda o: [
            o["metadata"]["name"],
            f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 0)}",
            age(o),
            *_workload_images(o),
        ],
    ),
    ("apps", "controllerrevisions"): (
        [NAME, _col("Controller"), _col("Revision", "integer"), AGE],
        lambda o: [o["metadata"]["name"], _controller_name(o), o.get("revision", 0), age(o)],
    ),
    ("", "persistentvolumeclaims"): (
        [
            NAME,
            _col("Status"),
            _col("Volume"),
            _col("Capacity"),
            _col("Access Modes"),
            _col("StorageClass"),
            _col("VolumeAttributesClass"),
            AGE,
            _col("VolumeMode", priority=1),
        ],
        lambda o: _pvc_row(o),
    ),
    ("apps", "daemonsets"): (
        [
            NAME,
            _col("Desired", "integer"),
            _col("Current", "integer"),
            _col("Ready", "integer"),
            _col("Up-to-date", "integer"),
            _col("Available", "integer"),
            AGE,
        ],
        lambda o: [
            o["metadata"]["name"],
            *[
                (o.get("status") or {}).get(k, 0)
                for k in (
                    "desiredNumberScheduled",
                    "currentNumberScheduled",
                    "numberReady",
                    "updatedNumberScheduled",
                    "numberAvailable",
                )
            ],
            age(o),
        ],
    ),
    ("batch", "jobs"): (
        [NAME, _col("Status"), _col("Completions"), _col("Duration"), AGE],
        lambda o: [
            o["metadata"]["name"],
            _job_status(o),
            f"{(o.get('status') or {}).get('succeeded', 0)}/{(o.get('spec') or {}).get('completions', 1)}",
            "",
            age(o),
        ],
    ),
    ("coordination.k8s.io", "leases"): (
        [NAME, _col("Holder"), AGE],
        lambda o: [o["metadata"]["name"], (o.get("spec") or {}).get("holderIdentity", ""), age(o)],
    ),
    ("", "services"): (
        [NAME, _col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)"), AGE],
        lambda o: [
            o["metadata"]["name"],
            (o.get("spec") or {}).get("type", "ClusterIP"),
            (o.get("spec") or {}).get("clusterIP", "<none>"),
            "<none>",
            ",".join(
                f"{p.get('port')}/{p.get('protocol', 'TCP')}"
                for p in (o.get("spec") or {}).get("ports") or []
            )
            or "<none>",
            age(o),
        ],
    ),
    ("rbac.authorization.k8s.io", "roles"): (
        [NAME, _col("Created At", fmt="date")],
        lambda o: [o["metadata"]["name"], _created_at(o)],
    ),
    ("rbac.authorization.k8s.io", "clusterroles"): (
        [NAME, _col("Created At", fmt="date")],
        lambda o: [o["metadata"]["name"], _created_at(o)],
    ),
    ("rbac.authorization.k8s.io", "rolebindings"): (_BINDING_COLUMNS, _binding_row),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): (_BINDING_COLUMNS, _binding_row),
    ("scheduling.k8s.io", "priorityclasses"): (
        [NAME, _col("Value", "integer"), _col("Global-Default", "boolean"), AGE, _col("PreemptionPolicy")],
        lambda o: [
            o["metadata"]["name"],
            o.get("value", 0),
            bool(o.get("globalDefault")),
            age(o),
            o.get("preemptionPolicy", ""),
        ],
    ),
    ("networking.k8s.io", "ingresses"): (
        [NAME, _col("Class"), _col("Hosts"), _col("Address"), _col("Ports"), AGE],
        _ingress_row,
    ),
    ("networking.k8s.io", "ingressclasses"): (
        [NAME, _col("Controller"), _col("Parameters"), AGE],
        lambda o: [
            o["metadata"]["name"],
            (o.get("spec") or {}).get("controller", ""),
            "<none>",
            age(o),
        ],
    ),
    # apiextensions serves CRDs through the generic default table convertor: a name and an RFC 3339 date.
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        [NAME, CREATED_AT],
        lambda o: [o["metadata"]["name"], _created_at(o)],
    ),
    ("networking.k8s.io", "networkpolicies"): (
        [NAME, _col("Pod-Selector"), AGE],
        lambda o: [o["metadata"]["name"], _selector_text((o.get("spec") or {}).get("podSelector")), age(o)],
    ),
}


def _job_status(o: dict[str, Any]) -> str:
    for cond in (o.get("status") or {}).get("conditions") or []:
        if cond.get("status") == "True" and cond.get("type") in ("Complete", "Failed", "Suspended"):
            return cond["type"]
    return "Running"


def table_columns(rt: ResourceType) -> tuple[list[dict[str, Any]], Any]:
    """Column definitions and a row function for one resource type."""
    if rt.is_custom:
        cols = rt.printer_columns
        if cols is None:
            return [NAME, AGE], lambda o: [o["metadata"]["name"], age(o)]
        defs = [NAME] + [
            _col(
                c["name"],
                c.get("type", "string"),
                c.get("priority", 0),
                c.get("format", ""),
                c.get("description", ""),
            )
            for c in cols
        ]
        has_age = any(c.get("jsonPath") == ".metadata.creationTimestamp" for c in cols)
        if not has_age:
            pass
        return defs, lambda o: [o["metadata"]["name"], *[_crd_cell(o, c) for c in cols]]
    if rt.key in BUILTIN_TABLES:
        return BUILTIN_TABLES[rt.key]
    return [NAME, AGE], lambda o: [o["metadata"]["name"], age(o)]


def to_table(
    rt: ResourceType,
    objects: list[dict[str, Any]],
    list_meta: dict[str, Any],
    include_object: str = "Metadata",
) -> dict[str, Any]:
    defs, row = table_columns(rt)
    rows = []
    for o in objects:
        entry: dict[str, Any] = {"cells": row(o)}
        if include_object == "Object":
            entry["object"] = o
        elif include_object != "None":
            entry["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": o.get("metadata", {}),
            }
        rows.append(entry)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": defs,
        "rows": rows,
    }
