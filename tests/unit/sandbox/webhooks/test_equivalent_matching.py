"""matchPolicy Equivalent: which webhook is called as which version (ShouldCallHook's two passes), which
resources count as equivalent, and what the AdmissionReview then says."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver.admission import AdmissionAttributes, EquivalentResource
from kruise.sandbox.apiserver.equivalence import equivalent_resources, kind_for
from kruise.sandbox.apiserver.resources import ResourceType, builtin_resources, crd_resources
from kruise.sandbox.apiserver.webhooks import Invocation, build_review, match_invocation

GROUP = "demo.example.com"
SCALE = {"group": "autoscaling", "version": "v1", "kind": "Scale"}


def widget_kind(version: str) -> dict[str, str]:
    return {"group": GROUP, "version": version, "kind": "Widget"}


def eq(version: str, kind: dict[str, str] | None = None) -> EquivalentResource:
    return EquivalentResource(GROUP, version, "widgets", kind or widget_kind(version))


EQUIVALENTS = [eq("v1"), eq("v2"), eq("v3")]


def attrs(version="v2", sub="", op="CREATE", kind=None) -> AdmissionAttributes:
    return AdmissionAttributes(
        operation=op,
        group=GROUP,
        version=version,
        resource="widgets",
        subresource=sub,
        kind=kind or widget_kind(version),
        namespace="default",
        name="w",
        object={"apiVersion": f"{GROUP}/{version}", "kind": "Widget", "metadata": {"name": "w"}},
        old_object=None,
    )


def hook(*rules, policy="Equivalent"):
    spec = {"name": "w.example.com", "rules": list(rules)}
    if policy is not None:
        spec["matchPolicy"] = policy
    return spec


def rule(versions=("v1",), resources=("widgets",), groups=(GROUP,), ops=("CREATE",)):
    return {
        "operations": list(ops),
        "apiGroups": list(groups),
        "apiVersions": list(versions),
        "resources": list(resources),
    }


def test_exact_match_is_the_request_itself():
    got = match_invocation(hook(rule(["v2"])), attrs("v2"), EQUIVALENTS)
    assert got == Invocation(GROUP, "v2", "widgets", "", widget_kind("v2"))


def test_equivalent_falls_back_to_the_version_the_rule_names():
    got = match_invocation(hook(rule(["v1"])), attrs("v2"), EQUIVALENTS)
    assert got == Invocation(GROUP, "v1", "widgets", "", widget_kind("v1"))
    assert got.api_version == f"{GROUP}/v1"


@pytest.mark.parametrize("policy", ["Exact", None])
def test_exact_or_unset_policy_never_falls_back(policy):
    # unset cannot reach the emulator (the v1 default is stored), and kube-apiserver reads it as Exact
    assert match_invocation(hook(rule(["v1"]), policy=policy), attrs("v2"), EQUIVALENTS) is None


def test_an_exact_match_in_a_later_rule_beats_an_equivalent_one_in_an_earlier_rule():
    got = match_invocation(hook(rule(["v1"]), rule(["v2"])), attrs("v2"), EQUIVALENTS)
    assert got is not None and got.version == "v2"


def test_earlier_rules_are_honoured_before_equivalent_order():
    # equivalents list v1 before v3, but the first rule names v3
    got = match_invocation(hook(rule(["v3"]), rule(["v1"])), attrs("v2"), EQUIVALENTS)
    assert got is not None and got.version == "v3"


def test_within_one_rule_the_first_registered_equivalent_wins():
    got = match_invocation(hook(rule(["v3", "v1"])), attrs("v2"), EQUIVALENTS)
    assert got is not None and got.version == "v1"


def test_wildcard_version_matches_the_request_itself():
    got = match_invocation(hook(rule(["*"])), attrs("v2"), EQUIVALENTS)
    assert got is not None and got.version == "v2" and got.kind == widget_kind("v2")


def test_no_equivalents_means_no_fallback():
    assert match_invocation(hook(rule(["v1"])), attrs("v2"), []) is None


@pytest.mark.parametrize(
    ("rules", "reason"),
    [
        ([rule(["v1"], ops=("UPDATE",))], "operation"),
        ([rule(["v1"], groups=("other.example.com",))], "group"),
        ([rule(["v1"], resources=("gadgets",))], "resource"),
        ([rule(["v9"])], "version not served"),
    ],
)
def test_equivalent_rule_still_has_to_match_everything_else(rules, reason):
    assert match_invocation(hook(*rules), attrs("v2"), EQUIVALENTS) is None, reason


@pytest.mark.parametrize(
    ("resources", "sub", "expected"),
    [
        (["widgets/status"], "status", "v1"),
        (["widgets"], "status", None),
        (["widgets/*"], "status", "v1"),
        (["widgets/status"], "", None),
        (["widgets/scale"], "scale", "v1"),
    ],
)
def test_subresources_must_match_on_the_equivalent_too(resources, sub, expected):
    kind = SCALE if sub == "scale" else widget_kind("v2")
    equivalents = [eq(v, SCALE if sub == "scale" else None) for v in ("v1", "v2")]
    got = match_invocation(hook(rule(["v1"], resources)), attrs("v2", sub, kind=kind), equivalents)
    assert (got.version if got else None) == expected
    if got is not None:
        assert got.subresource == sub
        assert got.kind == (SCALE if sub == "scale" else widget_kind("v1"))


@given(
    rule_versions=st.lists(st.sampled_from(["v1", "v2", "v3", "*"]), min_size=1, max_size=3),
    request_version=st.sampled_from(["v1", "v2", "v3"]),
)
def test_equivalent_and_exact_agree_whenever_exact_matches(rule_versions, request_version):
    request = attrs(request_version)
    exact = match_invocation(hook(rule(rule_versions), policy="Exact"), request, EQUIVALENTS)
    equivalent = match_invocation(hook(rule(rule_versions)), request, EQUIVALENTS)
    if exact is not None:
        assert equivalent == exact
    else:
        # with only served versions listed, some equivalent always matches
        assert equivalent is not None and equivalent.version in rule_versions


# -- which resources are equivalent


def widget_crd(versions=("v1", "v2"), unserved=(), scale_in=("v1", "v2")) -> dict:
    def version(name):
        subresources = {"status": {}}
        if name in scale_in:
            subresources["scale"] = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.r"}
        return {
            "name": name,
            "served": name not in unserved,
            "storage": name == versions[0],
            "subresources": subresources,
        }

    return {
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [version(v) for v in versions],
        },
    }


def served_with(crd: dict) -> list[ResourceType]:
    return builtin_resources() + crd_resources(crd)


def test_a_crd_has_its_served_versions_in_spec_order():
    types = served_with(widget_crd(("v2", "v1", "v3"), unserved=("v3",)))
    rt = next(t for t in types if t.plural == "widgets" and t.version == "v1")
    assert [e.version for e in equivalent_resources(rt, types, "")] == ["v2", "v1"]
    assert all(
        e.kind["kind"] == "Widget" and e.kind["version"] == e.version
        for e in equivalent_resources(rt, types, "")
    )


def test_a_subresource_only_counts_versions_that_have_it_and_scale_keeps_its_kind():
    types = served_with(widget_crd(scale_in=("v2",)))
    rt = next(t for t in types if t.plural == "widgets" and t.version == "v2")
    scale = equivalent_resources(rt, types, "scale")
    assert [(e.version, e.kind == SCALE) for e in scale] == [("v2", True)]
    assert [e.version for e in equivalent_resources(rt, types, "status")] == ["v1", "v2"]
    assert kind_for(rt, "status") == widget_kind("v2")


def test_another_crd_with_the_same_plural_is_not_equivalent():
    other = widget_crd()
    other["metadata"]["name"] = "widgets.other.example.com"
    other["spec"]["group"] = "other.example.com"
    types = served_with(widget_crd()) + crd_resources(other)
    rt = next(t for t in types if t.group == GROUP and t.version == "v1")
    assert {e.group for e in equivalent_resources(rt, types, "")} == {GROUP}


# -- the review


def test_review_names_the_matched_version_and_the_requested_one():
    request = attrs("v2", sub="status")
    invocation = Invocation(GROUP, "v1", "widgets", "status", widget_kind("v1"))
    at_v1 = {**request.object, "apiVersion": f"{GROUP}/v1"}
    body = build_review(request, invocation, at_v1, None)["request"]
    assert body["kind"] == widget_kind("v1")
    assert body["resource"] == {"group": GROUP, "version": "v1", "resource": "widgets"}
    assert body["subResource"] == "status"
    assert body["requestKind"] == widget_kind("v2")
    assert body["requestResource"] == {"group": GROUP, "version": "v2", "resource": "widgets"}
    assert body["requestSubResource"] == "status"
    assert body["object"]["apiVersion"] == f"{GROUP}/v1"
    assert body["oldObject"] is None


def test_review_without_invocation_is_the_request_itself():
    request = attrs("v2")
    body = build_review(request)["request"]
    assert body["kind"] == body["requestKind"] == widget_kind("v2")
    assert body["resource"] == body["requestResource"]
    assert body["object"] is request.object
