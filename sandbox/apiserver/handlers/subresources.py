"""Subresources that are not the object itself: /scale, pods/eviction, pods/binding, pods/log.

- /scale reads and writes an `autoscaling/v1` Scale projected from the object (the CRD's
  `scale` subresource paths, or spec.replicas / status.replicas / spec.selector for built-in kinds);
  a Scale update goes through admission as a Scale and stores only the new replica count.
- pods/eviction checks the PodDisruptionBudgets and then deletes the pod like a DELETE would.
- pods/binding sets spec.nodeName and the PodScheduled condition, once.
- pods/log streams the container log from the simulated kubelet (see podlogs.py).
- pods/exec and pods/attach relay kubectl's WebSocket to the node's kubelet (see podexec.py).
- pods/ephemeralcontainers serves the Pod; a PUT or PATCH may only add ephemeral containers
  (the strategy and the rules are in ephemeral.py).
- pods/resize serves the Pod; a PUT or PATCH changes only containers' resources and resizePolicy
  (in-place pod resize; the strategy and ValidatePodResize are in podresize.py).
- SelfSubjectAccessReview, a create-only virtual resource, answers "allowed" for everything.

/status and namespaces/finalize are not here: they are updates of the object with a narrower
strategy, handled by the update pipeline in writes.py.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from aiohttp import web

from kruise.sandbox.apiserver import defaults, ephemeral, errors, podexec, podlogs, podresize, schema, tables
from kruise.sandbox.apiserver.features import features_for
from kruise.sandbox.apiserver.handlers.base import RequestContext, now_iso
from kruise.sandbox.apiserver.resources import ResourceType
from kruise.sandbox.apiserver.selectors import format_label_selector


def scale_of(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The autoscaling/v1 Scale an object shows at /scale."""
    paths = rt.scale_paths or {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.selector" if rt.is_custom else "",
    }
    spec_val = tables.json_path(obj, paths["specReplicasPath"])
    status_val = tables.json_path(obj, paths.get("statusReplicasPath", ""))
    scale: dict[str, Any] = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: obj["metadata"][k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in obj["metadata"]
        },
        "spec": {"replicas": spec_val[0] if spec_val else 0},
        "status": {"replicas": status_val[0] if status_val else 0},
    }
    if rt.is_custom:
        sel = (
            tables.json_path(obj, paths.get("labelSelectorPath") or "")
            if paths.get("labelSelectorPath")
            else []
        )
        if sel:
            scale["status"]["selector"] = sel[0]
    else:
        scale["status"]["selector"] = format_label_selector((obj.get("spec") or {}).get("selector"))
    return scale


class Subresources(RequestContext):
    """The subresources with a shape of their own: scale, eviction, binding, log; and access reviews."""

    async def serve_log(self) -> web.StreamResponse:
        pod = self._stored()
        node = self.store.get(("", "nodes"), "", (pod.get("spec") or {}).get("nodeName") or "")
        return await podlogs.serve(self.request, pod, node, self.server.kubelet_host)

    async def serve_stream(self) -> web.StreamResponse:
        pod = self._stored()
        node = self.store.get(("", "nodes"), "", (pod.get("spec") or {}).get("nodeName") or "")
        return await podexec.serve(self.request, self.sub, pod, node, self.server.kubelet_host)

    async def _update_scale(self, scale: dict[str, Any]) -> dict[str, Any]:
        old_stored = self._stored()
        old = await self._served(old_stored)  # the scale paths are the request version's
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.stale(self.rt.group, self.rt.plural, self.name)
        replicas = (scale.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or replicas < 0:
            raise errors.invalid(
                "autoscaling",
                "Scale",
                self.name,
                [
                    errors.field_error(
                        "FieldValueInvalid", "spec.replicas", replicas, "must be greater than or equal to 0"
                    )
                ],
            )
        attrs = self._attrs(
            "UPDATE", scale, scale_of(self.rt, old), {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
        )
        await self._admit(attrs, lambda o: None)
        new = copy.deepcopy(old)
        path = (self.rt.scale_paths or {}).get("specReplicasPath", ".spec.replicas").lstrip(".").split(".")
        target = new
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = (attrs.object or scale)["spec"]["replicas"]
        saved_sub = self.sub
        self.sub = ""
        causes = schema.validate(new, self.rt.schema) if self.rt.is_custom and self.rt.schema else []
        if causes:
            raise errors.invalid(self.rt.group, self.rt.kind, self.name, causes)
        try:
            stored = await self._commit_update(old_stored, old, new, "Update")  # Writes, in writes.py
        finally:
            self.sub = saved_sub
        return scale_of(self.rt, await self._served(stored))

    async def token_request(self) -> dict[str, Any]:
        """serviceaccounts/<name>/token: a token the emulator then accepts as that account."""
        body = self._object_body(await self._body())
        account = self._stored()
        attrs = self._attrs("CREATE", body, None, {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"})
        await self._admit(attrs, lambda o: None)
        return self.server.tokens.request(account, attrs.object or body)

    async def _update_ephemeral_containers(self, body: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        """An update of pods/ephemeralcontainers: only `spec.ephemeralContainers` is taken, added to."""
        return await self._update_pod_through(ephemeral.prepare, ephemeral.validate, body, old)

    async def _update_resize(self, body: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        """An update of pods/resize: only containers' `resources` and `resizePolicy` are taken; the
        update path bumps metadata.generation as kube-apiserver 1.33+ does for a spec change."""
        needs_restart = features_for(self.server.git_version).memory_decrease_needs_restart

        def validate(new: dict[str, Any], stored: dict[str, Any]) -> list[dict[str, str]]:
            return podresize.validate(new, stored, memory_decrease_needs_restart=needs_restart)

        return await self._update_pod_through(podresize.prepare, validate, body, old)

    async def _update_pod_through(
        self,
        prepare: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]],
        validate: Callable[[dict[str, Any], dict[str, Any]], list[dict[str, str]]],
        body: dict[str, Any],
        old: dict[str, Any],
    ) -> dict[str, Any]:
        """A pod subresource whose strategy takes only some fields of the body (`prepare`) and then
        checks the result (`validate`): what mutating webhooks change outside those fields is dropped
        again, as the subresource's strategy does in kube-apiserver."""
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.stale(self.rt.group, self.rt.plural, self.name)
        new = prepare(body, old)
        defaults.pod_scheme(new)

        def prepare_and_validate(obj: dict[str, Any]) -> None:
            kept = prepare(obj, old)
            defaults.pod_scheme(kept)
            obj.clear()
            obj.update(kept)
            causes = validate(obj, old)
            if causes:
                raise errors.invalid(self.rt.group, self.rt.kind, self.name, causes)

        options = {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
        result = await self._admit(self._attrs("UPDATE", new, old, options), prepare_and_validate)
        assert result is not None
        return await self._commit_update(old, old, result, "Update")  # Writes, in writes.py

    async def access_review(self) -> dict[str, Any]:
        """The sandbox token is a member of system:masters, so every review is allowed, as RBAC would say."""
        review = self._object_body(await self._body())
        review["metadata"].setdefault("creationTimestamp", None)
        review["status"] = {
            "allowed": True,
            "reason": 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of '
            'ClusterRole "cluster-admin" to Group "system:masters"',
        }
        return review

    async def pod_subresource(self) -> dict[str, Any]:
        body = await self._body() or {}
        pod = self._stored()
        if self.sub == "binding":
            target = (body.get("target") or {}).get("name")
            attrs = self._attrs(
                "CREATE", body, None, {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
            )
            await self._admit(attrs, lambda o: None)
            if pod["spec"].get("nodeName"):
                raise errors.conflict(
                    "",
                    "pods",
                    self.name,
                    f'pod {self.name} is already assigned to node "{pod["spec"]["nodeName"]}"',
                )
            if not target:
                raise errors.invalid(
                    "", "Binding", self.name, [errors.field_error("FieldValueRequired", "target.name")]
                )
            if not self.dry_run:
                new = copy.deepcopy(pod)
                new["spec"]["nodeName"] = target
                conds = new.setdefault("status", {}).setdefault("conditions", [])
                conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
                conds.append(
                    {
                        "type": "PodScheduled",
                        "status": "True",
                        "lastProbeTime": None,
                        "lastTransitionTime": now_iso(),
                    }
                )
                self.store.put(self.rt.key, new, "MODIFIED", pod)
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
        attrs = self._attrs("CREATE", body, None, {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"})
        await self._admit(attrs, lambda o: None)
        self.server.lifecycle.check_disruption_budgets(pod, self.dry_run)
        if not self.dry_run:
            options = body.get("deleteOptions") or {}
            await self._delete_object(pod, options)  # Deletes, in delete.py
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
