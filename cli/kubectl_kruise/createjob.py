"""`create job NAME (--image=IMAGE [-- COMMAND...] | --from=TYPE/NAME)`: run a Job now.

The common use is triggering an AdvancedCronJob (or a CronJob) by hand: the Job is built from its
`jobTemplate`, annotated `cronjob.kubernetes.io/instantiate: manual` and owned by the cron job,
exactly as kubectl and kruise-tools build it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.kube.client import Client
from kruise.kube.errors import ApiError
from kruise.kube.resources import JOBS, ResourceRef

INSTANTIATE_ANNOTATION = "cronjob.kubernetes.io/instantiate"
CRONJOBS = ResourceRef("batch", "v1", "cronjobs", True, "CronJob")
ADVANCED_CRONJOBS = ResourceRef("apps.kruise.io", "v1alpha1", "advancedcronjobs", True, "AdvancedCronJob")
CRONJOB = kinds.Workload(CRONJOBS, "cronjob", ("cj",))
ADVANCED_CRONJOB = kinds.Workload(ADVANCED_CRONJOBS, "advancedcronjob", ("acj",))
SOURCES = (CRONJOB, ADVANCED_CRONJOB)


class CreateJobError(PluginError):
    """Bad flags or an unusable source; upstream's wording."""


@dataclass(frozen=True)
class CreateJobOptions:
    name: str
    image: str = ""
    source: str = ""  # --from, TYPE/NAME
    command: tuple[str, ...] = ()
    dry_run: str = "none"
    # `create broadcastJob` takes the same flags and rules, refused as its own error
    error: ClassVar[type[PluginError]] = CreateJobError

    def validate(self) -> None:
        if bool(self.image) == bool(self.source):
            raise self.error("either --image or --from must be specified")
        if self.command and self.source:
            raise self.error("cannot specify --from and command")


def resolve_source(text: str) -> kinds.Target:
    kind, _, name = text.partition("/")
    if not kind or not name:
        raise CreateJobError(f"from must be an existing cronjob: {text}")
    for source in SOURCES:
        if kind.lower() in source.names():
            return kinds.Target(source, name)
    raise CreateJobError(f'the server doesn\'t have a resource type "{kind}"')


def job_from_image(options: CreateJobOptions, namespace: str) -> dict[str, Any]:
    container: dict[str, Any] = {"name": options.name, "image": options.image}
    if options.command:
        container["command"] = list(options.command)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": options.name, "namespace": namespace},
        "spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}},
    }


def job_from_template(
    name: str, namespace: str, owner: Mapping[str, Any], template: Mapping[str, Any]
) -> dict[str, Any]:
    """A Job from a JobTemplateSpec, owned by (not controlled by) the cron job, as upstream."""
    template_meta = template.get("metadata") or {}
    annotations = {INSTANTIATE_ANNOTATION: "manual", **(template_meta.get("annotations") or {})}
    owner_meta = owner.get("metadata") or {}
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "annotations": annotations,
        "ownerReferences": [
            {
                "apiVersion": owner.get("apiVersion", ""),
                "kind": owner.get("kind", ""),
                "name": owner_meta.get("name", ""),
                "uid": owner_meta.get("uid", ""),
            }
        ],
    }
    if template_meta.get("labels"):
        metadata["labels"] = dict(template_meta["labels"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": dict(template.get("spec") or {}),
    }


def job_from_source(
    source: kinds.Target, obj: Mapping[str, Any], name: str, namespace: str
) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    if source.workload is CRONJOB:
        return job_from_template(name, namespace, obj, spec.get("jobTemplate") or {})
    template = (spec.get("template") or {}).get("jobTemplate")
    if template is None:
        kind = "BroadcastJob" if (spec.get("template") or {}).get("broadcastJobTemplate") else ""
        raise CreateJobError(f"from must be a job template, but got {kind}")
    return job_from_template(name, namespace, obj, template)


async def create_job(
    client: Client, namespace: str, options: CreateJobOptions, printer: Printer
) -> list[str]:
    options.validate()
    if options.image:
        job = job_from_image(options, namespace)
    else:
        source = resolve_source(options.source)
        obj = await client.get(source.workload.ref, source.name, namespace)
        job = job_from_source(source, obj, options.name, namespace)
    if options.dry_run != "client":
        try:
            job = await client.create(JOBS, job, namespace, dry_run=options.dry_run == "server")
        except ApiError as err:
            raise CreateJobError(f"failed to create job: {err.message}") from None
    printer.object(f"job.batch/{job['metadata']['name']}", "created", job)
    return []
