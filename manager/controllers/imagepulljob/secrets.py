"""The writes that keep an ImagePullJob's pull secret copies in kruise-daemon's namespace (the plan is
`kruise.control.imagepulljob.pullsecrets`): kruise-daemon may read Secrets there only, so the NodeImage
points at copies, shared by every job naming the same Secret and deleted when no job references them."""

from __future__ import annotations

import contextlib

import structlog

from kruise.api.objects import Obj
from kruise.control.imagepulljob import pullsecrets
from kruise.kube.client import Client
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import NAMESPACES, SECRETS

log = structlog.get_logger(__name__)


class NamespaceNotActive(Exception):
    """The daemon's namespace is missing or being deleted: the job cannot hand its Secrets over."""


class PullSecretSync:
    def __init__(self, client: Client, secrets: SharedInformer, namespace: str) -> None:
        self.client = client
        self.secrets = secrets
        self.namespace = namespace

    def _copies(self) -> list[Obj]:
        return [s for s in self.secrets.list() if s["metadata"].get("namespace") == self.namespace]

    async def sync(self, job: Obj) -> list[dict[str, str]]:
        """Release what the job no longer needs, claim what it names; the NodeImage references to use.
        A job finished or being deleted claims nothing, so this also releases everything it held."""
        meta = job["metadata"]
        names = (job.get("spec") or {}).get("pullSecrets") or []
        if meta.get("namespace") == self.namespace:
            return (
                [{"namespace": self.namespace, "name": n} for n in names] if pullsecrets.running(job) else []
            )
        if not names and not any(
            pullsecrets.job_key(job) in pullsecrets.referencing_jobs(s) for s in self._copies()
        ):
            return []
        await self._ensure_namespace()
        classified = pullsecrets.classify(job, self._copies())
        for secret in classified.release:
            await self._release(secret, pullsecrets.job_key(job))
        refs = []
        for source, existing in classified.claim.items():
            ref = await self._claim(source, existing, pullsecrets.job_key(job))
            if ref is not None:
                refs.append(ref)
        return refs

    async def _ensure_namespace(self) -> None:
        try:
            namespace = await self.client.get(NAMESPACES, self.namespace)
        except NotFound as exc:
            raise NamespaceNotActive(f"namespace {self.namespace} not found") from exc
        if namespace["metadata"].get("deletionTimestamp"):
            raise NamespaceNotActive(f"namespace({self.namespace}) is being deleted")

    async def _release(self, secret: Obj, job: str) -> None:
        meta = secret["metadata"]
        updated = pullsecrets.released(secret, job)
        with contextlib.suppress(NotFound):
            if updated is None:
                await self.client.delete(SECRETS, meta["name"], meta["namespace"])
                log.info("deleted pull secret copy", secret=f"{meta['namespace']}/{meta['name']}", job=job)
            else:
                await self.client.update(SECRETS, updated)

    async def _claim(self, source_key: str, existing: Obj | None, job: str) -> dict[str, str] | None:
        """The copy's reference, after creating or refreshing it; None when the source Secret is gone
        (upstream logs it and pulls without it)."""
        namespace, name = source_key.split("/", 1)
        try:
            source = await self.client.get(SECRETS, name, namespace)
        except NotFound:
            log.warning("imagePullJob pullSecret not found", job=job, secret=source_key)
            return None
        if existing is None:
            body = pullsecrets.new_copy(source, self.namespace, job)
            try:
                created = await self.client.create(SECRETS, body)
                log.info(
                    "created pull secret copy", secret=f"{self.namespace}/{body['metadata']['name']}", job=job
                )
                return pullsecrets.reference(created)
            except AlreadyExists:
                existing = await self.client.get(SECRETS, body["metadata"]["name"], self.namespace)
        updated = pullsecrets.claimed(existing, source, job)
        if updated is not None:
            await self.client.update(SECRETS, updated)
        return pullsecrets.reference(existing)
