"""Admission webhooks, called the way kube-apiserver calls them (admissionregistration.k8s.io/v1).

The emulator must surface exactly what a real cluster would: the same matching rules, the same
AdmissionReview body, the same TLS checks against ``caBundle`` and the same error texts. Anything
looser here would let kruise's webhook pass tests and then fail on a real apiserver.

``matchPolicy: Equivalent`` (the v1 default): a webhook none of whose rules names the request's
group/version/resource is still called if a rule names an equivalent one (another served version of
the custom resource, see equivalence.py) - earlier rules first -, with ``kind``/``resource`` the
matched version, ``requestKind``/``requestResource`` what the client asked, and the objects
converted to the matched version; a mutating webhook's patch applies there and the result is
converted back. A rule that names the request's own resource always wins; ``Exact`` never falls back.

Known simplifications (documented in docs/sandbox.md):
- ``matchConditions`` (CEL) are not evaluated; a webhook that declares them is called regardless.
- ``auditAnnotations`` in responses are ignored (there is no audit log).
- A patch made at an equivalent version is converted back at once and defaulted at the request's
  version (kube-apiserver defaults at the webhook's version and converts back lazily).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import inspect
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonpatch
import jsonpointer
import orjson

from kruise.sandbox.apiserver.admission import AdmissionAttributes, AdmissionDenied, EquivalentResource
from kruise.sandbox.apiserver.webhookcall import CallFailed, ServiceAddresses, WebhookCaller

ADMISSION_GROUP = "admissionregistration.k8s.io"
ADMISSION_VERSION = "v1"
DEFAULT_TIMEOUT_SECONDS = 10

# Requests on these never go through webhooks, so a broken webhook cannot lock itself in.
_EXEMPT_RESOURCES = frozenset(
    {
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
    }
)
_OPTIONS_KIND = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}

ListObjects = Callable[[str, str, str], "Iterable[dict[str, Any]] | Awaitable[Iterable[dict[str, Any]]]"]


class InvalidSelector(ValueError):
    """A label selector that kube-apiserver would refuse to parse."""


class WebhookCallError(Exception):
    """A webhook could not be called or answered nonsense; failurePolicy decides what happens."""


# ---------------------------------------------------------------------------------------------
# Matching


def selector_matches(selector: dict[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics; a missing or empty selector matches everything."""
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op == "In":
            if not values:
                raise InvalidSelector(f"{key}: values: Required value: must be specified for In")
            if key not in labels or labels[key] not in values:
                return False
        elif op == "NotIn":
            if not values:
                raise InvalidSelector(f"{key}: values: Required value: must be specified for NotIn")
            if key in labels and labels[key] in values:
                return False
        elif op == "Exists":
            if key not in labels:
                return False
        elif op == "DoesNotExist":
            if key in labels:
                return False
        else:
            raise InvalidSelector(f'"{op}" is not a valid label selector operator')
    return True


def _split_resource(entry: str) -> tuple[str, str]:
    resource, _, sub = entry.partition("/")
    return resource, sub


def rule_matches(
    rule: dict[str, Any], attrs: AdmissionAttributes, resource: tuple[str, str, str] | None = None
) -> bool:
    """One RuleWithOperations against a request, as the apiserver's rules.Matcher does it.

    ``resource`` (group, version, resource) stands in for the request's own when an equivalent
    resource is tried (matchPolicy Equivalent)."""

    def listed(values: list[str] | None, wanted: str) -> bool:
        return any(v == "*" or v == wanted for v in values or [])

    group, version, plural = resource or (attrs.group, attrs.version, attrs.resource)
    if not listed(rule.get("operations"), attrs.operation):
        return False
    if not listed(rule.get("apiGroups"), group) or not listed(rule.get("apiVersions"), version):
        return False
    if not any(
        res in ("*", plural) and sub in ("*", attrs.subresource)
        for res, sub in map(_split_resource, rule.get("resources") or [])
    ):
        return False
    scope = rule.get("scope") or "*"
    is_namespace = group == "" and plural == "namespaces"
    if scope == "Namespaced":
        return not is_namespace and attrs.namespace != ""
    if scope == "Cluster":
        return is_namespace or attrs.namespace == ""
    return True


@dataclass(frozen=True)
class Invocation:
    """The resource and kind one webhook is called with: the request's own when a rule names it,
    otherwise (matchPolicy Equivalent) the equivalent resource a rule named."""

    group: str
    version: str
    resource: str
    subresource: str
    kind: dict[str, str]

    @property
    def api_version(self) -> str:
        """The apiVersion the objects are sent at (the kind's; a Scale stays autoscaling/v1)."""
        group, version = self.kind.get("group", ""), self.kind.get("version", "")
        return f"{group}/{version}" if group else version


def match_invocation(
    spec: dict[str, Any], attrs: AdmissionAttributes, equivalents: Iterable[EquivalentResource] = ()
) -> Invocation | None:
    """Whether (and as what) a webhook is called for a request, as ShouldCallHook decides.

    Any rule naming the request's own resource wins. Failing that, and only under
    ``matchPolicy: Equivalent``, the rules are tried in order against each equivalent resource
    (in registration order); the first match names the version the webhook is called at."""
    rules = spec.get("rules") or []
    if any(rule_matches(rule, attrs) for rule in rules):
        return Invocation(attrs.group, attrs.version, attrs.resource, attrs.subresource, dict(attrs.kind))
    if spec.get("matchPolicy") != "Equivalent":
        return None
    own = (attrs.group, attrs.version, attrs.resource)
    candidates = [e for e in equivalents if (e.group, e.version, e.resource) != own]
    for rule in rules:
        for eq in candidates:
            if rule_matches(rule, attrs, (eq.group, eq.version, eq.resource)):
                return Invocation(eq.group, eq.version, eq.resource, attrs.subresource, dict(eq.kind))
    return None


def _labels_of(obj: dict[str, Any] | None) -> dict[str, str] | None:
    if obj is None:
        return None
    return (obj.get("metadata") or {}).get("labels") or {}


def object_selector_matches(webhook: dict[str, Any], attrs: AdmissionAttributes) -> bool:
    """The object selector is tried against the new and the old object; either may match."""
    selector = webhook.get("objectSelector")
    if not selector:
        return True
    return any(
        labels is not None and selector_matches(selector, labels)
        for labels in (_labels_of(attrs.object), _labels_of(attrs.old_object))
    )


def _not_found(resource: str, name: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{resource} "{name}" not found',
        "reason": "NotFound",
        "details": {"name": name, "kind": resource},
        "code": 404,
    }


# ---------------------------------------------------------------------------------------------
# Status bodies, worded as kube-apiserver words them


def denial_status(webhook_name: str, result: dict[str, Any] | None) -> dict[str, Any]:
    """A webhook's refusal, shaped like apiserver's webhookerrors.ToStatusErr."""
    result = dict(result or {})
    denied_by = f'admission webhook "{webhook_name}" denied the request'
    code = result.get("code") or 0
    if code < 400:
        code = 400
    status = result.get("status") or ""
    if status in ("", "Success"):
        status = "Failure"
    if result.get("message"):
        message = f"{denied_by}: {result['message']}"
    elif result.get("reason"):
        message = f"{denied_by}: {result['reason']}"
    else:
        message = f"{denied_by} without explanation"
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": status}
    body["message"] = message
    if result.get("reason"):
        body["reason"] = result["reason"]
    if result.get("details"):
        body["details"] = result["details"]
    body["code"] = code
    return body


def internal_error_status(message: str) -> dict[str, Any]:
    """apierrors.NewInternalError: the cause repeated in details, code 500."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"Internal error occurred: {message}",
        "reason": "InternalError",
        "details": {"causes": [{"message": message}]},
        "code": 500,
    }


def bad_request_status(message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "BadRequest",
        "code": 400,
    }


# ---------------------------------------------------------------------------------------------
# Calling


@dataclass(frozen=True)
class _Hook:
    """One webhook of one configuration, with what is needed to report about it."""

    config_name: str
    spec: dict[str, Any]
    mutating: bool
    invocation: Invocation

    @property
    def name(self) -> str:
        return self.spec.get("name", "")

    @property
    def key(self) -> tuple[str, str]:
        return self.config_name, self.name


class WebhookAdmission:
    """An AdmissionPlugin that calls the webhooks registered in the emulator's own storage.

    ``list_objects(group, version, plural)`` returns the stored objects of a resource (sync or
    async); it is read on every request, so a configuration change applies to the next write.
    ``service_addresses`` resolves a clientConfig.service ``(namespace, name, port)`` to the
    ``host:port`` actually listening - the sandbox has no cluster DNS - while TLS is still checked
    against ``<name>.<namespace>.svc`` as a real apiserver does; a callable resolver may raise
    ``ServiceUnreachable`` to fail the call with the apiserver's words (see ``serviceroute``).
    """

    def __init__(
        self,
        list_objects: ListObjects,
        service_addresses: ServiceAddresses | None = None,
    ) -> None:
        self._list_objects = list_objects
        self.caller = WebhookCaller(service_addresses)

    async def aclose(self) -> None:
        await self.caller.aclose()

    # -- AdmissionPlugin ------------------------------------------------------------------------

    async def mutate(self, attrs: AdmissionAttributes) -> list[str]:
        hooks = await self._matching_hooks(attrs, mutating=True)
        warnings: list[str] = []
        ifneeded_called: set[tuple[str, str]] = set()
        reinvoke: set[tuple[str, str]] = set()
        for hook in hooks:
            changed = await self._call_mutating(hook, attrs, warnings)
            if changed:
                reinvoke |= ifneeded_called
            if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                ifneeded_called.add(hook.key)
        if reinvoke:
            for hook in hooks:
                if hook.key in reinvoke:
                    await self._call_mutating(hook, attrs, warnings)
        return warnings

    async def validate(self, attrs: AdmissionAttributes) -> list[str]:
        hooks = await self._matching_hooks(attrs, mutating=False)
        # as the validating dispatcher: every version needed is converted before any webhook is called
        versioned: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {}
        for hook in hooks:
            if hook.invocation.api_version not in versioned:
                versioned[hook.invocation.api_version] = await _versioned(hook.invocation, attrs)
        results = await asyncio.gather(
            *(self._call_validating(hook, attrs, versioned[hook.invocation.api_version]) for hook in hooks)
        )
        warnings: list[str] = []
        for hook_warnings, _ in results:
            warnings.extend(hook_warnings)
        for _, error in results:
            if error is not None:
                raise error
        return warnings

    # -- selection ------------------------------------------------------------------------------

    async def _list(self, group: str, version: str, plural: str) -> list[dict[str, Any]]:
        found = self._list_objects(group, version, plural)
        if inspect.isawaitable(found):
            found = await found
        return list(found)

    async def _matching_hooks(self, attrs: AdmissionAttributes, *, mutating: bool) -> list[_Hook]:
        if attrs.group == ADMISSION_GROUP and attrs.resource in _EXEMPT_RESOURCES:
            return []
        plural = "mutatingwebhookconfigurations" if mutating else "validatingwebhookconfigurations"
        configs = await self._list(ADMISSION_GROUP, ADMISSION_VERSION, plural)
        configs.sort(key=lambda c: (c.get("metadata") or {}).get("name", ""))
        namespace_labels: dict[str, str] | None = None
        equivalents = attrs.versions.equivalents(attrs.subresource) if attrs.versions is not None else []
        matched: list[_Hook] = []
        for config in configs:
            config_name = (config.get("metadata") or {}).get("name", "")
            for spec in config.get("webhooks") or []:
                invocation = match_invocation(spec, attrs, equivalents)
                if invocation is None:
                    continue
                try:
                    if spec.get("namespaceSelector") and self._namespace_selector_applies(attrs):
                        if namespace_labels is None:
                            namespace_labels = await self._namespace_labels(attrs)
                        if not selector_matches(spec["namespaceSelector"], namespace_labels):
                            continue
                    if not object_selector_matches(spec, attrs):
                        continue
                except InvalidSelector as exc:
                    raise AdmissionDenied(internal_error_status(str(exc))) from exc
                matched.append(_Hook(config_name, spec, mutating, invocation))
        return matched

    @staticmethod
    def _namespace_selector_applies(attrs: AdmissionAttributes) -> bool:
        # Cluster-scoped objects other than namespaces are never exempted by a namespaceSelector.
        return attrs.namespace != "" or (attrs.group == "" and attrs.resource == "namespaces")

    async def _namespace_labels(self, attrs: AdmissionAttributes) -> dict[str, str]:
        if attrs.group == "" and attrs.resource == "namespaces" and attrs.subresource == "":
            own = attrs.old_object if attrs.operation == "DELETE" else attrs.object
            return _labels_of(own) or {}
        for ns in await self._list("", "v1", "namespaces"):
            if (ns.get("metadata") or {}).get("name") == attrs.namespace:
                return _labels_of(ns) or {}
        raise AdmissionDenied(_not_found("namespaces", attrs.namespace))

    # -- one call -------------------------------------------------------------------------------

    async def _call_mutating(self, hook: _Hook, attrs: AdmissionAttributes, warnings: list[str]) -> bool:
        """Call one mutating webhook; apply its patch; return whether the object changed.

        As in the apiserver, only failures to call (or to understand the answer) obey
        failurePolicy; a patch that cannot be applied is always an internal error.
        """
        obj, old = await _versioned(hook.invocation, attrs)
        try:
            response = await self._call(hook, attrs, obj, old)
            warnings.extend(response.get("warnings") or [])
            if not response.get("allowed"):
                raise AdmissionDenied(denial_status(hook.name, response.get("status")))
            if not response.get("patch"):
                return False
            if obj is None:
                raise AdmissionDenied(
                    internal_error_status(
                        f'admission webhook "{hook.name}" attempted to modify the object, '
                        "which is not supported for this operation"
                    )
                )
            try:
                operations = orjson.loads(base64.b64decode(response["patch"], validate=True))
                patch = jsonpatch.JsonPatch(operations)
            except (
                binascii.Error,
                orjson.JSONDecodeError,
                ValueError,
                TypeError,
                jsonpatch.JsonPatchException,
            ) as exc:
                raise AdmissionDenied(internal_error_status(str(exc))) from exc
            if response.get("patchType") != "JSONPatch":
                patch_type = response.get("patchType")
                raise WebhookCallError(
                    f'failed calling webhook "{hook.name}": unsupported patch type "{patch_type}"'
                )
        except WebhookCallError as exc:
            if hook.spec.get("failurePolicy", "Fail") == "Ignore":
                return False
            raise AdmissionDenied(internal_error_status(str(exc))) from exc
        try:
            patched = patch.apply(obj, in_place=False)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
            raise AdmissionDenied(internal_error_status(str(exc))) from exc
        if patched == obj:
            return False
        request_version = _api_version(attrs.kind)
        if hook.invocation.api_version != request_version and attrs.versions is not None:
            # the patch applied at the webhook's version; the request goes on at its own
            patched = await attrs.versions.convert(patched, request_version)
        if attrs.defaulter is not None:
            attrs.defaulter(patched)  # the dispatcher defaults the decoded patch result, as kube-apiserver
        attrs.object = patched
        return True

    async def _call_validating(
        self,
        hook: _Hook,
        attrs: AdmissionAttributes,
        versioned: tuple[dict[str, Any] | None, dict[str, Any] | None],
    ) -> tuple[list[str], AdmissionDenied | None]:
        try:
            response = await self._call(hook, attrs, *versioned)
        except WebhookCallError as exc:
            if hook.spec.get("failurePolicy", "Fail") == "Ignore":
                return [], None
            return [], AdmissionDenied(internal_error_status(str(exc)))
        except AdmissionDenied as exc:
            return [], exc
        warnings = list(response.get("warnings") or [])
        if not response.get("allowed"):
            return warnings, AdmissionDenied(denial_status(hook.name, response.get("status")))
        return warnings, None

    async def _call(
        self,
        hook: _Hook,
        attrs: AdmissionAttributes,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """POST one AdmissionReview (``obj``/``old`` at the invocation's version) and return its
        checked ``response``."""
        failed = f'failed calling webhook "{hook.name}"'
        if attrs.dry_run:
            side_effects = hook.spec.get("sideEffects")
            if side_effects is None:
                raise WebhookCallError(f"{failed}: Webhook SideEffects is nil")
            if side_effects not in ("None", "NoneOnDryRun"):
                raise AdmissionDenied(
                    bad_request_status(f'admission webhook "{hook.name}" does not support dry run')
                )
        timeout = hook.spec.get("timeoutSeconds") or DEFAULT_TIMEOUT_SECONDS
        review = build_review(attrs, hook.invocation, obj, old)
        uid = review["request"]["uid"]
        try:
            content = await self.caller.post(hook.spec.get("clientConfig") or {}, review, timeout)
        except CallFailed as exc:
            raise WebhookCallError(f"{failed}: failed to call webhook: {exc}") from exc
        try:
            body = orjson.loads(content)
        except orjson.JSONDecodeError as exc:
            raise WebhookCallError(f"{failed}: received invalid webhook response: {exc}") from exc
        return _checked_response(failed, body, uid, mutating=hook.mutating)


def _api_version(kind: Mapping[str, str]) -> str:
    group, version = kind.get("group", ""), kind.get("version", "")
    return f"{group}/{version}" if group else version


async def _versioned(
    invocation: Invocation, attrs: AdmissionAttributes
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The request's object and old object at the invocation's version (VersionedAttributes): the
    same dicts when it is the request's own kind, converted copies otherwise. A failed conversion
    is the converter's 500, whatever the failurePolicy, as in the apiserver."""
    if attrs.versions is None or invocation.api_version == _api_version(attrs.kind):
        return attrs.object, attrs.old_object
    converted = []
    for obj in (attrs.object, attrs.old_object):
        converted.append(None if obj is None else await attrs.versions.convert(obj, invocation.api_version))
    return converted[0], converted[1]


def _checked_response(failed: str, body: Any, uid: str, *, mutating: bool) -> dict[str, Any]:
    """request.VerifyAdmissionResponse: an AdmissionReview v1 for our uid, patch fields consistent."""
    invalid = f"{failed}: received invalid webhook response"
    if not isinstance(body, dict):
        raise WebhookCallError(f"{invalid}: response is not a JSON object")
    response = body.get("response")
    if not isinstance(response, dict):
        raise WebhookCallError(f"{invalid}: webhook response was absent")
    if response.get("uid") != uid:
        raise WebhookCallError(f'{invalid}: expected response.uid="{uid}", got "{response.get("uid", "")}"')
    api_version, kind = str(body.get("apiVersion", "")), str(body.get("kind", ""))
    if (api_version, kind) != ("admission.k8s.io/v1", "AdmissionReview"):
        group, _, version = api_version.rpartition("/")
        raise WebhookCallError(
            f"{invalid}: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, "
            f"got {group}/{version}, Kind={kind}"
        )
    patch, patch_type = response.get("patch"), response.get("patchType")
    if mutating:
        if patch and patch_type is None:
            raise WebhookCallError(f"{invalid}: webhook returned response.patch but not response.patchType")
        if not patch and patch_type is not None:
            raise WebhookCallError(f"{invalid}: webhook returned response.patchType but not response.patch")
        if patch_type is not None and not patch_type:
            raise WebhookCallError(f'{invalid}: webhook returned invalid response.patchType of ""')
    else:
        if patch:
            raise WebhookCallError(f"{invalid}: validating webhook may not return response.patch")
        if patch_type is not None:
            raise WebhookCallError(f"{invalid}: validating webhook may not return response.patchType")
    return response


_UNCHANGED: Any = object()


def build_review(
    attrs: AdmissionAttributes,
    invocation: Invocation | None = None,
    obj: dict[str, Any] | None = _UNCHANGED,
    old: dict[str, Any] | None = _UNCHANGED,
) -> dict[str, Any]:
    """The AdmissionReview v1 request body for one admission attempt.

    ``kind``/``resource``/``subResource`` are the invocation's (the version the webhook's rule
    matched) and ``object``/``oldObject`` are at that version; ``requestKind``/``requestResource``/
    ``requestSubResource`` are always what the client asked for. Without an invocation, the
    request's own resource and objects."""
    requested = {"group": attrs.group, "version": attrs.version, "resource": attrs.resource}
    kind, resource, subresource = dict(attrs.kind), dict(requested), attrs.subresource
    if invocation is not None:
        kind = dict(invocation.kind)
        resource = {"group": invocation.group, "version": invocation.version, "resource": invocation.resource}
        subresource = invocation.subresource
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()),
        "kind": kind,
        "resource": resource,
        "requestKind": dict(attrs.kind),
        "requestResource": requested,
    }
    if subresource:
        request["subResource"] = subresource
    if attrs.subresource:
        request["requestSubResource"] = attrs.subresource
    if attrs.name:
        request["name"] = attrs.name
    if attrs.namespace:
        request["namespace"] = attrs.namespace
    request["operation"] = attrs.operation
    request["userInfo"] = attrs.user_info
    request["object"] = attrs.object if obj is _UNCHANGED else obj
    request["oldObject"] = attrs.old_object if old is _UNCHANGED else old
    request["dryRun"] = attrs.dry_run
    options = attrs.options
    if options is None and attrs.operation in _OPTIONS_KIND:
        options = {"kind": _OPTIONS_KIND[attrs.operation], "apiVersion": "meta.k8s.io/v1"}
    request["options"] = options
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": request}
