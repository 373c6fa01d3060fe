"""NodeImage spec clean-up for a reader at v1alpha1 that must still honour v1beta1 `pullSecrets[].mode`.

The manager reads NodeImages at v1alpha1, which has no `mode` on a pull secret reference. A client
that wrote the NodeImage at v1beta1 left the modes in the conversion-data annotation
(`kruise.api.conversion.lossless`): one entry per image, at `spec.images[<name>].pullSecrets`,
holding the v1beta1 list (`value`) and the v1alpha1 list it was stashed against (`mapped`). The
conversion applies an entry only while the v1alpha1 list still equals `mapped`.

So the clean-up is planned on the object as a v1beta1 reader sees it (the conversion applied, the
modes back on the references), which makes `mode: batch` references stay as upstream keeps them,
and the planned spec is converted back to v1alpha1: the conversion then writes the annotation that
matches what remains (entries of removed references or images gone, the remaining modes re-stashed
against the new lists, no annotation at all when no mode is left). The controller writes that
annotation together with the spec, so a v1beta1 reader still sees the right modes afterwards.

An annotation the conversion cannot read (not the JSON it writes) is left as it is and the spec is
planned at v1alpha1 alone: every reference then counts as a plain one, as it would for any v1beta1
reader, whose reads of that object fail anyway.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import datetime
from typing import Any

from kruise.api.conversion import ConversionError, convert
from kruise.api.objects import Obj, annotations_of
from kruise.control.nodeimage.cleanup import JobLookup, SecretLookup, SpecPlan, prune_spec

GROUP = "apps.kruise.io"
KIND = "NodeImage"
V1ALPHA1 = f"{GROUP}/v1alpha1"
V1BETA1 = f"{GROUP}/v1beta1"


def _annotations(obj: Obj) -> dict[str, Any]:
    return dict(annotations_of(obj))


def as_v1beta1(node_image: Obj) -> dict[str, Any]:
    """The NodeImage (read at v1alpha1 unless its apiVersion says otherwise) as a v1beta1 reader
    sees it. Raises ConversionError when its conversion-data annotation is unreadable."""
    alpha = {**copy.deepcopy(dict(node_image)), "kind": KIND}
    alpha.setdefault("apiVersion", V1ALPHA1)
    return convert(alpha, V1BETA1)


def plan_spec(node_image: Obj, now: datetime, job_uid: JobLookup, secret_exists: SecretLookup) -> SpecPlan:
    """`prune_spec` for a NodeImage read at v1alpha1, as the manager reads it: `mode: batch`
    references (stashed in the conversion-data annotation) are kept, and when the spec changes
    `plan.annotations` holds the annotations to write with it (None: leave them as read).
    `plan.spec` is a v1alpha1 spec."""
    if node_image.get("apiVersion") not in (None, V1ALPHA1):
        return prune_spec(node_image, now, job_uid, secret_exists)
    try:
        beta = as_v1beta1(node_image)
    except ConversionError:
        return prune_spec(node_image, now, job_uid, secret_exists)
    plan = prune_spec(beta, now, job_uid, secret_exists)
    if plan.spec is None:
        return plan
    alpha = convert({**beta, "spec": plan.spec}, V1ALPHA1)
    annotations = _annotations(alpha)
    return replace(
        plan, spec=alpha["spec"], annotations=annotations if annotations != _annotations(node_image) else None
    )
