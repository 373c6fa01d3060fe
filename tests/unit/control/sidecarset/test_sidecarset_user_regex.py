"""The two SidecarSet places that run users' regexes do it with Go's syntax and MatchString."""

from __future__ import annotations

import json

import pytest

from kruise.control.sidecarset.resources import ResourcesPolicyError, target_containers
from kruise.control.sidecarset.whitelist import whitelist_error
from tests.kit.pods import pod

KEY = "SidecarSet_PatchPodMetadata_WhiteList"


def pod_of(*names: str) -> dict:
    """A pod of containers named `names` (only the spec is read here)."""
    return pod(containers=[{"name": name} for name in names])


@pytest.mark.parametrize(
    ("regex", "expected"),
    [
        ("app", ["app", "my-app", "app2"]),  # unanchored
        ("^app$", ["app"]),
        (r"\d$", ["app2"]),  # "web٣" ends in a Unicode digit, not a Go \d
        ("(?i)APP", ["app", "my-app", "app2"]),
        (r"^\w+$", ["app", "app2"]),
    ],
)
def test_target_container_names_match_as_go(regex: str, expected: list[str]) -> None:
    the_pod = pod_of("app", "my-app", "app2", "web٣")
    assert [c["name"] for c in target_containers(the_pod, regex, [])] == expected


def test_unicode_digit_is_not_a_go_digit() -> None:
    assert target_containers(pod_of("web٣", "web3"), r"\d", []) == [{"name": "web3"}]


@pytest.mark.parametrize(
    ("regex", "go_error"),
    [
        ("app-(?=main)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
        (r"(a)\1", "error parsing regexp: invalid escape sequence: `\\1`"),
        ("a++", "error parsing regexp: invalid nested repetition operator: `++`"),
    ],
)
def test_a_pattern_go_refuses_fails_the_pod_webhook_with_gos_text(regex: str, go_error: str) -> None:
    with pytest.raises(ResourcesPolicyError) as caught:
        target_containers(pod_of("app"), regex, [])
    assert str(caught.value) == (
        f"failed to get target containers: invalid regex pattern {json.dumps(regex)}: {go_error}"
    )


def sidecarset(*keys: str) -> dict:
    return {
        "metadata": {"name": "s", "labels": {}},
        "spec": {"patchPodMetadata": [{"annotations": dict.fromkeys(keys, "1")}]},
    }


def whitelist(*exprs: str) -> dict:
    return {KEY: json.dumps({"rules": [{"allowedAnnotationKeyExprs": list(exprs)}]})}


@pytest.mark.parametrize(
    ("exprs", "keys", "error"),
    [
        (["(?=a)"], ["a.io/x"], "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
        (["ok", r"\C"], ["ok"], "error parsing regexp: invalid escape sequence: `\\C`"),
        ([r"^a\.io/"], ["a.io/x", "a.io/y"], None),
        (["io/"], ["a.io/x"], None),  # unanchored: matches inside the key
        (["(?i)^A\\.IO/"], ["a.io/x"], None),
        (["^A\\.IO/"], ["a.io/x"], "sidecarSet patch metadata annotation(a.io/x) is not allowed"),
        ([r"/\d+$"], ["a.io/٣"], "sidecarSet patch metadata annotation(a.io/٣) is not allowed"),
        ([r"/\d+$"], ["a.io/3"], None),
    ],
)
def test_whitelist_expressions_are_go_regexps(exprs: list[str], keys: list[str], error: str | None) -> None:
    assert whitelist_error(sidecarset(*keys), whitelist(*exprs), defaults_allowed=False) == error
