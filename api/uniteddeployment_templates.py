"""UnitedDeployment subset templates: upstream 1.9's checks of the one embedded workload, on CREATE and
UPDATE.

Per kind, as upstream's webhook does it:
- statefulSetTemplate / advancedStatefulSetTemplate: the workload's labels must match the selector
  (an advancedStatefulSetTemplate mismatch is reported under `statefulSetTemplate`, upstream's path);
  `spec.replicas` and an explicit RollingUpdate `partition` are refused ("will not be used"); the pod
  template gets apps' ValidatePodTemplateSpecForStatefulSet (selector match, labels, annotations —
  not the pod spec, which native StatefulSets do not check either).
- deploymentTemplate: labels match, `spec.replicas` refused, and the pod template gets
  ValidatePodTemplateSpecForReplicaSet (full pod-template validation, `restartPolicy: Always`, no
  `activeDeadlineSeconds`).
- cloneSetTemplate: only counted — upstream validates nothing inside it.

On UPDATE a kept statefulSetTemplate / advancedStatefulSetTemplate may change only `replicas`,
`template` and `updateStrategy`; a kept deploymentTemplate may change anything. Switching kinds is not
checked, as upstream.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kruise.api.common import LabelSelector, selector_matches
from kruise.api.objects import labels_of, meta_of
from kruise.api.podtemplate_defaults import default_pod_template
from kruise.api.podtemplate_validation import validate_pod_template
from kruise.api.validation import (
    FieldError,
    changed_outside,
    forbidden,
    invalid,
    not_supported,
    qualified_name_errors,
    required,
    too_long,
    validate_labels,
    validate_nonnegative,
)

if TYPE_CHECKING:
    from kruise.api.uniteddeployment import SubsetTemplate, WorkloadTemplate

KINDS = "statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate"
MISMATCH = "`selector` does not match template `labels`"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
"""apimachinery's TotalAnnotationSizeLimitB."""

STATEFUL_MUTABLE_FIELDS = ("replicas", "template", "updateStrategy")
"""What a kept (advanced) StatefulSet template may change on update (upstream restores these three
from the old spec, then requires the rest to be equal)."""

# StatefulSetSpec fields that are Go values, not pointers: an explicit zero equals leaving them out.
_VALUE_FIELDS = {"serviceName": "", "podManagementPolicy": "", "minReadySeconds": 0}


def _labels(workload: WorkloadTemplate) -> dict[str, str]:
    return (workload.metadata.labels if workload.metadata else None) or {}


def _pod_template(workload: WorkloadTemplate) -> dict[str, Any]:
    return workload.spec.get("template") or {}


def validate_annotations(annotations: dict[str, str] | None, path: str) -> list[FieldError]:
    """apimachinery's ValidateAnnotations: qualified-name keys, 256 KiB in total."""
    annotations = annotations or {}
    errs: list[FieldError] = []
    for key in annotations:
        errs.extend(invalid(path, key, m) for m in qualified_name_errors(key.lower()))
    if sum(len(k) + len(v) for k, v in annotations.items()) > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _pod_labels_errors(pod: dict[str, Any], selector: LabelSelector | None, path: str) -> list[FieldError]:
    """The pod-template selector check both apps helpers open with; an empty selector skips it."""
    labels = labels_of(pod)
    if selector is not None and selector.is_empty():
        return []
    if selector_matches(selector, labels):
        return []
    return [invalid(f"{path}.metadata.labels", labels, MISMATCH)]


def validate_statefulset_pod_template(
    pod: dict[str, Any], selector: LabelSelector | None, path: str
) -> list[FieldError]:
    """apps' ValidatePodTemplateSpecForStatefulSet. Its labels are reported at `<path>.labels` (not
    `metadata.labels`) and its annotations at `<path>.annotations`, upstream's paths."""
    metadata = pod.get("metadata") or {}
    errs = _pod_labels_errors(pod, selector, path)
    errs.extend(validate_labels(metadata.get("labels"), f"{path}.labels"))
    errs.extend(validate_annotations(metadata.get("annotations"), f"{path}.annotations"))
    return errs


def validate_replicaset_pod_template(
    pod: dict[str, Any], selector: LabelSelector | None, path: str
) -> list[FieldError]:
    """apps' ValidatePodTemplateSpecForReplicaSet on the defaulted copy upstream's converter makes
    (so a missing restartPolicy counts as Always); the stored template is not changed."""
    pod = copy.deepcopy(pod)
    default_pod_template(pod)
    errs = _pod_labels_errors(pod, selector, path)
    errs.extend(validate_pod_template(pod, path))
    errs.extend(validate_annotations(meta_of(pod).get("annotations"), f"{path}.metadata.annotations"))
    spec = pod.get("spec") or {}
    restart = spec.get("restartPolicy")
    if restart != "Always":
        errs.append(not_supported(f"{path}.spec.restartPolicy", restart, ["Always"]))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None:
        errs.append(
            invalid(
                f"{path}.spec.activeDeadlineSeconds",
                deadline,
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            )
        )
    return errs


def _unused_fields_errors(
    workload: WorkloadTemplate, field: str, path: str, *, partition: bool
) -> list[FieldError]:
    """validateStatefulSet / validateAdvancedStatefulSet / validateDeployment: the UnitedDeployment
    owns the child's replicas and (for StatefulSets) its partition, so setting them is refused."""
    spec = workload.spec
    errs: list[FieldError] = []
    if spec.get("replicas") is not None:
        errs.append(
            invalid(f"{path}.spec.replicas", spec["replicas"], f"replicas in {field} will not be used")
        )
    strategy = spec.get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate")
    explicit_rolling = strategy.get("type") == "RollingUpdate" and isinstance(rolling, dict)
    if partition and explicit_rolling and rolling.get("partition") is not None:
        errs.append(
            invalid(
                f"{path}.spec.updateStrategy.rollingUpdate.partition",
                rolling["partition"],
                f"partition in {field} will not be used",
            )
        )
    return errs


def validate_template(
    template: SubsetTemplate, selector: LabelSelector | None, path: str
) -> list[FieldError]:
    """validateSubsetTemplate. A missing selector matches nothing (LabelSelectorAsSelector(nil)), an
    empty one everything. Only the first template present (in upstream's order) is checked."""
    errs: list[FieldError] = []
    present = [
        t
        for t in (
            template.stateful_set_template,
            template.advanced_stateful_set_template,
            template.clone_set_template,
            template.deployment_template,
        )
        if t is not None
    ]
    if not present:
        errs.append(required(path, f"should provide one of {KINDS}"))
    elif len(present) > 1:
        errs.append(invalid(path, template.to_dict(), f"should provide only one of {KINDS}"))
    # (field, the path a workload-labels mismatch is reported under, the workload)
    for field, label_field, workload in (
        ("statefulSetTemplate", "statefulSetTemplate", template.stateful_set_template),
        ("advancedStatefulSetTemplate", "statefulSetTemplate", template.advanced_stateful_set_template),
        ("deploymentTemplate", "deploymentTemplate", template.deployment_template),
    ):
        if workload is None:
            continue
        if not selector_matches(selector, _labels(workload)):
            errs.append(invalid(f"{path}.{label_field}.metadata.labels", _labels(workload), MISMATCH))
        stateful = field != "deploymentTemplate"
        errs.extend(_unused_fields_errors(workload, field, f"{path}.{field}", partition=stateful))
        pod_path = f"{path}.{field}.spec.template"
        if stateful:
            errs.extend(validate_statefulset_pod_template(_pod_template(workload), selector, pod_path))
        else:
            errs.extend(validate_replicaset_pod_template(_pod_template(workload), selector, pod_path))
        break
    return errs


def _semantic(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec as Go's typed Semantic.DeepEqual sees it: nil and empty lists/maps alike, and a value
    field's explicit zero the same as leaving it out."""

    def prune(value: Any) -> Any:
        if isinstance(value, dict):
            out = {k: prune(v) for k, v in value.items()}
            return {k: v for k, v in out.items() if v is not None and v != {} and v != []}
        if isinstance(value, list):
            return [prune(v) for v in value]
        return value

    pruned = prune(spec)
    return {k: v for k, v in pruned.items() if not (k in _VALUE_FIELDS and v == _VALUE_FIELDS[k])}


def _stateful_update_errors(
    new: WorkloadTemplate, old: WorkloadTemplate, label: str, path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    if changed_outside(_semantic(new.spec), _semantic(old.spec), STATEFUL_MUTABLE_FIELDS):
        errs.append(
            forbidden(
                f"{path}.spec",
                f"updates to {label} spec for fields other than 'template', and 'updateStrategy' "
                "are forbidden",
            )
        )
    replicas = new.spec.get("replicas")
    if isinstance(replicas, int):
        errs.extend(validate_nonnegative(replicas, f"{path}.spec.replicas"))
    return errs


def validate_template_update(template: SubsetTemplate, old: SubsetTemplate, path: str) -> list[FieldError]:
    """validateSubsetTemplateUpdate: only a template kind present in both old and new is compared."""
    if template.stateful_set_template is not None and old.stateful_set_template is not None:
        return _stateful_update_errors(
            template.stateful_set_template,
            old.stateful_set_template,
            "statefulsetTemplate",
            f"{path}.statefulSetTemplate",
        )
    if template.advanced_stateful_set_template is not None and old.advanced_stateful_set_template is not None:
        return _stateful_update_errors(
            template.advanced_stateful_set_template,
            old.advanced_stateful_set_template,
            "advancedStatefulsetTemplate",
            f"{path}.advancedStatefulSetTemplate",
        )
    if template.deployment_template is not None and old.deployment_template is not None:
        replicas = template.deployment_template.spec.get("replicas")
        if isinstance(replicas, int):
            return validate_nonnegative(replicas, f"{path}.deploymentTemplate.spec.replicas")
    return []
