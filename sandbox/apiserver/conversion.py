"""Custom resources between versions: strategy None rewrites apiVersion, strategy Webhook calls the CRD's
conversion webhook the way kube-apiserver's webhookConverter does.

The request pipeline works at the version of the request and stores at the CRD's storage version;
every crossing goes through `Converter.convert`: a write's object on its way to storage, a stored
object on its way out (get, list, watch, the object a write or delete returns). Objects already at
the wanted version are never sent. Several objects (a list page) go in one ConversionReview.

What a webhook answers is checked as kube-apiserver checks it: a ConversionReview of the version
sent for our uid, result Success, one converted object per object sent, each at the desired
apiVersion with the same kind, name, namespace and uid. Metadata is then restored from the original
except labels and annotations, which the webhook may change (string values only). Every failure is
a 500 InternalError worded as kube-apiserver words it ("conversion webhook for <group>/<version>,
Kind=<Kind> failed: ...").
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import orjson

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.resources import ResourceType
from kruise.sandbox.apiserver.webhookcall import CallFailed, WebhookCaller

REVIEW_GROUP = "apiextensions.k8s.io"
SUPPORTED_REVIEW_VERSIONS = ("v1beta1", "v1")
# kube-apiserver gives a conversion webhook 30 seconds; the CRD has no field to change it
TIMEOUT_SECONDS = 30

Obj = dict[str, Any]


class ConversionFailed(Exception):
    """The webhook's answer could not be used; the message is kube-apiserver's error text."""


def internal_error(message: str) -> StatusError:
    """apierrors.NewInternalError, which is what a failed conversion becomes in a response."""
    return StatusError(
        500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]}
    )


def uses_webhook(rt: ResourceType) -> bool:
    return rt.is_custom and (rt.conversion or {}).get("strategy") == "Webhook"


def _gvk(api_version: str, kind: str) -> str:
    """schema.GroupVersionKind.String(): "<group>/<version>, Kind=<Kind>"."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def _group_version(api_version: str) -> str:
    """schema.GroupVersion.String() of an apiVersion as sent ("" group: just the version)."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}" if group else version


class Converter:
    """Converts custom resources for the request pipeline (see the module docstring)."""

    def __init__(self, caller: WebhookCaller) -> None:
        self.caller = caller

    async def aclose(self) -> None:
        await self.caller.aclose()

    async def convert(
        self, rt: ResourceType, objects: list[Obj], api_version: str, *, as_list: bool = False
    ) -> list[Obj]:
        """``objects`` at ``api_version`` (new dicts where converted; the others as given).

        ``as_list``: the objects are a collection (list, deletecollection), converted as one
        ``<Kind>List`` as kube-apiserver converts a list; otherwise each is converted on its own.
        """
        if not uses_webhook(rt):
            return [
                o if o.get("apiVersion") == api_version else {**o, "apiVersion": api_version} for o in objects
            ]
        pending = [o for o in objects if o.get("apiVersion") != api_version]
        if not pending:
            return list(objects)
        if as_list:
            source = f"{pending[0].get('apiVersion', '')}"
            converted = await self._call(rt, pending, api_version, _gvk(source, f"{rt.kind}List"), True)
        else:
            converted = []
            for obj in pending:
                gvk = _gvk(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
                converted += await self._call(rt, [obj], api_version, gvk, False)
        by_original = iter(converted)
        return [o if o.get("apiVersion") == api_version else next(by_original) for o in objects]

    async def _call(
        self, rt: ResourceType, objects: list[Obj], api_version: str, gvk: str, as_list: bool
    ) -> list[Obj]:
        webhook = (rt.conversion or {}).get("webhook") or {}
        review_version = next(
            (v for v in webhook.get("conversionReviewVersions") or [] if v in SUPPORTED_REVIEW_VERSIONS), None
        )
        if review_version is None:
            raise internal_error("no supported conversion review versions")
        uid = str(uuid.uuid4())
        review = {
            "kind": "ConversionReview",
            "apiVersion": f"{REVIEW_GROUP}/{review_version}",
            "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objects},
        }
        try:
            content = await self.caller.post(webhook.get("clientConfig") or {}, review, TIMEOUT_SECONDS)
            body = orjson.loads(content)
        except (CallFailed, orjson.JSONDecodeError) as exc:
            raise internal_error(f"conversion webhook for {gvk} failed: {exc}") from exc
        try:
            answered = _converted_objects(body, uid, review_version)
        except ConversionFailed as exc:
            raise internal_error(f"conversion webhook for {gvk} failed: {exc}") from exc
        if len(answered) != len(objects):
            raise internal_error(
                f"conversion webhook for {gvk} returned {len(answered)} objects, expected {len(objects)}"
            )
        try:
            return [
                _checked(original, converted, api_version, index, as_list)
                for index, (original, converted) in enumerate(zip(objects, answered, strict=True))
            ]
        except ConversionFailed as exc:
            raise internal_error(f"conversion webhook for {gvk} {exc}") from exc


def _converted_objects(body: Any, uid: str, review_version: str) -> list[Any]:
    """getConvertedObjectsFromResponse: a v1 answer must be a v1 ConversionReview for our uid."""
    if not isinstance(body, dict):
        raise ConversionFailed("response is not a JSON object")
    if review_version == "v1":
        got = (str(body.get("apiVersion", "")), str(body.get("kind", "")))
        if got != (f"{REVIEW_GROUP}/v1", "ConversionReview"):
            raise ConversionFailed(
                f"expected webhook response of {REVIEW_GROUP}/v1, Kind=ConversionReview, "
                f"got {_gvk(got[0], got[1])}"
            )
    response = body.get("response")
    if not isinstance(response, dict):
        raise ConversionFailed("no response provided")
    if review_version == "v1" and response.get("uid") != uid:
        raise ConversionFailed(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    result = response.get("result") or {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise ConversionFailed(str(result["message"]))
        raise ConversionFailed(f"response.result.status was '{result.get('status', '')}', not 'Success'")
    objects = response.get("convertedObjects") or []
    if not isinstance(objects, list):
        raise ConversionFailed("response.convertedObjects is not a list")
    return objects


def _checked(original: Obj, converted: Any, api_version: str, index: int, as_list: bool) -> Obj:
    """One converted object, checked and with the original's metadata restored (webhookConverter.Convert).

    The wording follows kube-apiserver, including the index it reports: for a list, the position
    after the object (it counts before checking), for a single object "index 0"."""
    at = f"returned invalid converted object at index {index + 1}" if as_list else "returned invalid object"
    if not isinstance(converted, dict):
        raise ConversionFailed(f"returned invalid converted object at index {index}: not a JSON object")
    wanted, got = _group_version(api_version), _group_version(str(converted.get("apiVersion", "")))
    where = at if as_list else f"{at} at index 0"
    if got != wanted:
        raise ConversionFailed(f"{where}: invalid groupVersion (expected {wanted}, received {got})")
    if converted.get("kind") != original.get("kind"):
        raise ConversionFailed(
            f"{where}: invalid kind (expected {original.get('kind')}, received {converted.get('kind', '')})"
        )
    before, after = original.get("metadata") or {}, converted.get("metadata")
    after_meta = after if isinstance(after, dict) else {}
    for field in ("name", "namespace", "uid"):
        if (before.get(field) or "") != (after_meta.get(field) or ""):
            raise ConversionFailed(
                f"{at}: must have the same {'UID' if field == 'uid' else field}: "
                f"{before.get(field) or ''} != {after_meta.get(field) or ''}"
            )
    bad_meta = (
        "returned invalid metadata in object at index " + str(index + 1)
        if as_list
        else ("returned invalid metadata")
    )
    return _restore_metadata(original, converted, bad_meta)


def _restore_metadata(original: Obj, converted: Obj, bad_meta: str) -> Obj:
    """restoreObjectMeta: the original's metadata, with the converted object's labels and annotations."""
    answered = converted.get("metadata")
    if answered is None:
        raise ConversionFailed(f"{bad_meta}: missing metadata in converted object")
    if not isinstance(answered, dict):
        raise ConversionFailed(
            f"{bad_meta}: invalid metadata of type {type(answered).__name__} in converted object"
        )
    meta = copy.deepcopy(original.get("metadata") or {})
    for field in ("labels", "annotations"):
        value = answered.get(field)
        if value is None:
            meta.pop(field, None)
            continue
        if not isinstance(value, dict):
            raise ConversionFailed(
                f"{bad_meta}: invalid metadata.{field} of type {type(value).__name__} in converted object"
            )
        for key, item in value.items():
            if not isinstance(item, str):
                raise ConversionFailed(
                    f"{bad_meta}: metadata.{field}[{key}] must be a string, but is "
                    f"{type(item).__name__} in converted object"
                )
        meta[field] = value
    return {**converted, "metadata": meta}
