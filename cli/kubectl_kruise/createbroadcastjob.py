"""`create broadcastJob NAME (--image=IMAGE [-- COMMAND...] | --from=advancedcronjob/NAME)`.

A BroadcastJob runs its pod once on every eligible node. The common use is triggering an
AdvancedCronJob whose template is a BroadcastJob by hand: as kruise-tools builds it, the
BroadcastJob takes the template's labels, spec and annotations plus `cronjob.kubernetes.io/instantiate:
manual`, and is owned (not controlled) by the AdvancedCronJob. kruise-tools decides whether the
AdvancedCronJob is such a template by its `status.type` (kruise-manager writes it), so does this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kruise.cli.kubectl_kruise import createjob
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.kube.client import Client
from kruise.kube.errors import ApiError
from kruise.kube.resources import BROADCASTJOBS

BROADCASTJOB_TEMPLATE = "BroadcastJob"  # an AdvancedCronJob's status.type for a broadcastJobTemplate


class CreateBroadcastJobError(PluginError):
    """Bad flags or an unusable source; kruise-tools' wording."""


@dataclass(frozen=True)
class CreateBroadcastJobOptions(createjob.CreateJobOptions):
    """`create job`'s flags and rules (--image or --from, no command with --from)."""

    error: ClassVar[type[PluginError]] = CreateBroadcastJobError


def resolve_source(text: str) -> str:
    """The AdvancedCronJob's name from --from; kruise-tools accepts no other kind."""
    kind, _, name = text.partition("/")
    if not kind or not name:
        raise CreateBroadcastJobError("from must be an existing advancedCronJob")
    if kind.lower() in createjob.ADVANCED_CRONJOB.names():
        return name
    if kind.lower() in createjob.CRONJOB.names():
        raise CreateBroadcastJobError("unknown object type *v1.CronJob")
    raise CreateBroadcastJobError(f'the server doesn\'t have a resource type "{kind}"')


def broadcastjob_from_image(options: CreateBroadcastJobOptions, namespace: str) -> dict[str, Any]:
    container: dict[str, Any] = {"name": options.name, "image": options.image}
    if options.command:
        container["command"] = list(options.command)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": options.name, "namespace": namespace},
        "spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}},
    }


def broadcastjob_from_advancedcronjob(name: str, namespace: str, acj: Mapping[str, Any]) -> dict[str, Any]:
    kind = (acj.get("status") or {}).get("type", "")
    if kind != BROADCASTJOB_TEMPLATE:
        raise CreateBroadcastJobError(f"from must be a broadcastJob template, but got {kind}")
    template = ((acj.get("spec") or {}).get("template") or {}).get("broadcastJobTemplate") or {}
    template_meta = template.get("metadata") or {}
    acj_meta = acj.get("metadata") or {}
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "annotations": {
            createjob.INSTANTIATE_ANNOTATION: "manual",
            **(template_meta.get("annotations") or {}),
        },
        "ownerReferences": [
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "AdvancedCronJob",
                "name": acj_meta.get("name", ""),
                "uid": acj_meta.get("uid", ""),
            }
        ],
    }
    if template_meta.get("labels"):
        metadata["labels"] = dict(template_meta["labels"])
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": metadata,
        "spec": dict(template.get("spec") or {}),
    }


async def create_broadcastjob(
    client: Client, namespace: str, options: CreateBroadcastJobOptions, printer: Printer
) -> list[str]:
    options.validate()
    if options.image:
        job = broadcastjob_from_image(options, namespace)
    else:
        acj = await client.get(createjob.ADVANCED_CRONJOBS, resolve_source(options.source), namespace)
        job = broadcastjob_from_advancedcronjob(options.name, namespace, acj)
    if options.dry_run != "client":
        try:
            job = await client.create(BROADCASTJOBS, job, namespace, dry_run=options.dry_run == "server")
        except ApiError as err:
            raise CreateBroadcastJobError(f"failed to create job: {err.message}") from None
    printer.object(f"broadcastjob.apps.kruise.io/{job['metadata']['name']}", "created", job)
    return []
