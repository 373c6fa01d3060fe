"""Injection into a new pod: containers, volumes, envs, secrets, annotations, hot upgrade, conflicts."""

from __future__ import annotations

import copy
import datetime
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sidecar_builders import LOG_VOLUME, SIDECAR1, app_pod, sidecarset

from kruise.api.keys import (
    ANNOTATION_SIDECARSET_HASH,
    ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
    ANNOTATION_SIDECARSET_INJECTED_LIST,
    ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
)
from kruise.control.sidecarset.injection import InjectionConflict, InjectionError, inject, merge_by_key

NOW = datetime.datetime(2026, 11, 23, 3, 4, 5, 678000, tzinfo=datetime.UTC)
IS_INJECTED = {"name": "IS_INJECTED", "value": "true"}


def injected(p: dict, *sets: dict, **kwargs) -> dict:
    p = copy.deepcopy(p)
    assert inject(p, list(sets), now=NOW, **kwargs)
    return p


def container(p: dict, name: str) -> dict:
    return next(c for c in p["spec"]["containers"] + p["spec"].get("initContainers", []) if c["name"] == name)


def names(p: dict, key: str = "containers") -> list[str]:
    return [c["name"] for c in p["spec"].get(key, [])]


def test_seed_example_sidecar1_with_is_injected_and_log_volume():
    s = sidecarset("test-sidecarset", [SIDECAR1], volumes=[LOG_VOLUME])
    out = injected(app_pod(), s)
    assert names(out) == ["sidecar1", "app"]
    sidecar = container(out, "sidecar1")
    assert sidecar["env"] == [IS_INJECTED]
    assert sidecar["command"] == ["sleep", "999d"]
    assert sidecar["imagePullPolicy"] == "Always"  # defaulted on the SidecarSet for an untagged image
    assert "podInjectPolicy" not in sidecar and "upgradeStrategy" not in sidecar
    assert out["spec"]["volumes"] == [LOG_VOLUME]
    annotations = out["metadata"]["annotations"]
    assert annotations[ANNOTATION_SIDECARSET_INJECTED_LIST] == "test-sidecarset"
    record = json.loads(annotations[ANNOTATION_SIDECARSET_HASH])["test-sidecarset"]
    assert list(record) == ["updateTimestamp", "hash", "sidecarSetName", "sidecarList"]
    assert record == {
        "updateTimestamp": "2026-11-23T03:04:05Z",
        "hash": s["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH],
        "sidecarSetName": "test-sidecarset",
        "sidecarList": ["sidecar1"],
    }
    without = json.loads(annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE])["test-sidecarset"]
    assert without["hash"] == s["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE]


def test_hash_annotation_is_compact_go_json_with_controller_revision():
    s = sidecarset("s", [SIDECAR1], volumes=[LOG_VOLUME])
    s["status"] = {"latestRevision": "s-abc"}
    raw = injected(app_pod(), s)["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH]
    h = s["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH]
    assert raw == (
        '{"s":{"updateTimestamp":"2026-11-23T03:04:05Z","hash":"' + h + '","sidecarSetName":"s",'
        '"sidecarList":["sidecar1"],"controllerRevision":"s-abc"}}'
    )


def test_inject_policies_and_same_name_replacement():
    before = {"name": "before", "image": "b"}
    after = {"name": "after", "image": "a", "podInjectPolicy": "AfterAppContainer"}
    s = sidecarset("s", [before, after, {"name": "app", "image": "sidecar-app"}])
    out = injected(app_pod(), s)
    assert names(out) == ["before", "app", "after"]
    assert container(out, "app")["image"] == "sidecar-app"  # replaced where it stood


def test_existing_annotations_are_kept_and_old_hash_format_upgraded():
    p = app_pod(metadata={"annotations": {
        ANNOTATION_SIDECARSET_HASH: '{"old":"h1"}',
        ANNOTATION_SIDECARSET_INJECTED_LIST: "old",
        "keep": "me",
    }})  # fmt: skip
    out = injected(p, sidecarset("s", [SIDECAR1]))
    annotations = out["metadata"]["annotations"]
    assert annotations["keep"] == "me"
    assert annotations[ANNOTATION_SIDECARSET_INJECTED_LIST] == "old,s"
    assert annotations[ANNOTATION_SIDECARSET_HASH].startswith(
        '{"old":{"updateTimestamp":null,"hash":"h1","sidecarSetName":"old","sidecarList":null},"s":'
    )


def test_corrupt_hash_annotation_fails_the_request():
    p = app_pod(metadata={"annotations": {ANNOTATION_SIDECARSET_HASH: "{not json"}})
    with pytest.raises(
        InjectionError, match=r"pod\(default/test-pod\) invalid annotations\[kruise.io/sidecarset-hash\]"
    ):
        inject(p, [sidecarset("s", [SIDECAR1])], now=NOW)


def test_volumes_pod_wins_and_only_referenced_volumes_are_added():
    mine = {"name": "log-volume", "hostPath": {"path": "/mine"}}
    unused = {"name": "unused", "emptyDir": {}}
    out = injected(app_pod(volumes=[mine]), sidecarset("s", [SIDECAR1], volumes=[LOG_VOLUME, unused]))
    assert out["spec"]["volumes"] == [mine]


@given(
    st.lists(st.sampled_from("abcdef"), unique=True, max_size=4),
    st.lists(st.sampled_from("abcdefgh"), max_size=6),
)
def test_merge_by_key_keeps_originals_and_first_extras(pod_volumes, sidecar_volumes):
    original = [{"name": n, "from": "pod"} for n in pod_volumes]
    extra = [{"name": n, "from": f"sidecar{i}"} for i, n in enumerate(sidecar_volumes)]
    merged = merge_by_key(original, extra, "name")
    assert merged[: len(original)] == original
    assert [v["name"] for v in merged] == list(dict.fromkeys(pod_volumes + sidecar_volumes))
    for volume in merged[len(original) :]:
        assert volume == next(e for e in extra if e["name"] == volume["name"])


def test_share_volume_policy_mounts_app_volumes_except_taken_paths_and_injected_sidecars():
    app = {
        "name": "app", "image": "nginx",
        "env": [{"name": "POD_NAME", "value": "x"}, {"name": "OTHER", "value": "y"}],
        "volumeMounts": [
            {"name": "data", "mountPath": "/data", "subPathExpr": "logs/$(POD_NAME)"},
            {"name": "clash", "mountPath": "/var/log"},
        ],
    }  # fmt: skip
    old_sidecar = {
        "name": "old",
        "image": "o",
        "env": [IS_INJECTED],
        "volumeMounts": [{"name": "o", "mountPath": "/o"}],
    }
    sharing = {**SIDECAR1, "shareVolumePolicy": {"type": "enabled"}}
    out = injected(app_pod(containers=[app, old_sidecar]), sidecarset("s", [sharing], volumes=[LOG_VOLUME]))
    sidecar = container(out, "sidecar1")
    assert sidecar["volumeMounts"] == [
        {"name": "log-volume", "mountPath": "/var/log"},
        {"name": "data", "mountPath": "/data", "subPathExpr": "logs/$(POD_NAME)"},
    ]
    assert sidecar["env"] == [IS_INJECTED, {"name": "POD_NAME", "value": "x"}]


def test_share_volume_disabled_mounts_nothing_extra():
    app = {"name": "app", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    out = injected(app_pod(containers=[app]), sidecarset("s", [SIDECAR1]))
    assert container(out, "sidecar1")["volumeMounts"] == SIDECAR1["volumeMounts"]


def test_transfer_env_by_name_field_ref_and_env_names():
    app = {"name": "app", "image": "nginx", "env": [
        {"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "C", "value": "3"},
    ]}  # fmt: skip
    sidecar = {
        "name": "sc", "image": "x", "env": [{"name": "C", "value": "mine"}],
        "transferEnv": [
            {"sourceContainerName": "app", "envName": "A"},
            {"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['source']"}},
             "envNames": ["C", "B", "MISSING"]},
        ],
    }  # fmt: skip
    p = app_pod(containers=[app], labels={"app": "nginx", "source": "app"})
    env = container(injected(p, sidecarset("s", [sidecar])), "sc")["env"]
    assert env == [
        {"name": "C", "value": "mine"},
        IS_INJECTED,
        {"name": "A", "value": "1"},
        {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ]


def test_transfer_env_from_annotation_naming_a_missing_container_adds_nothing():
    sidecar = {
        "name": "sc",
        "image": "x",
        "transferEnv": [
            {
                "sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.annotations['src']"}},
                "envName": "A",
            }
        ],
    }
    env = container(injected(app_pod(), sidecarset("s", [sidecar])), "sc")["env"]
    assert env == [IS_INJECTED]


def test_image_pull_secrets_merged_and_deduplicated():
    p = app_pod(imagePullSecrets=[{"name": "mine"}, {"name": "mine"}])
    s = sidecarset("s", [SIDECAR1], imagePullSecrets=[{"name": "theirs"}, {"name": "mine"}])
    assert injected(p, s)["spec"]["imagePullSecrets"] == [{"name": "mine"}, {"name": "theirs"}]


def test_init_containers_sorted_after_existing_and_native_sidecars_listed():
    inits = [
        {"name": "z-init", "image": "z"},
        {"name": "a-native", "image": "a", "restartPolicy": "Always"},
    ]
    s = sidecarset("s", None, initContainers=inits, updateStrategy={"type": "NotUpdate"})
    out = injected(app_pod(initContainers=[{"name": "mine", "image": "m"}]), s)
    assert names(out, "initContainers") == ["mine", "a-native", "z-init"]
    assert container(out, "z-init")["env"] == [IS_INJECTED]
    record = json.loads(out["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH])["s"]
    assert record["sidecarList"] == ["a-native"]


def test_native_sidecar_before_app_goes_ahead_of_the_pods_init_containers():
    """`mergeSidecarContainers` serves initContainers too: BeforeAppContainer puts the sidecar first
    (the default for initContainers is AfterAppContainer, i.e. after the pod's own)."""
    native = {
        "name": "proxy",
        "image": "p",
        "restartPolicy": "Always",
        "podInjectPolicy": "BeforeAppContainer",
    }
    s = sidecarset("s", None, initContainers=[native], updateStrategy={"type": "NotUpdate"})
    out = injected(app_pod(initContainers=[{"name": "mine", "image": "m"}]), s)
    assert names(out, "initContainers") == ["proxy", "mine"]
    assert container(out, "proxy")["restartPolicy"] == "Always"
    assert "podInjectPolicy" not in container(out, "proxy")


def test_native_sidecar_replaces_a_same_named_pod_init_container_in_place():
    native = {"name": "proxy", "image": "new", "restartPolicy": "Always"}
    s = sidecarset("s", None, initContainers=[native], updateStrategy={"type": "NotUpdate"})
    p = app_pod(initContainers=[{"name": "proxy", "image": "old"}, {"name": "mine", "image": "m"}])
    out = injected(p, s)
    assert names(out, "initContainers") == ["proxy", "mine"]
    assert container(out, "proxy")["image"] == "new"


def test_hot_upgrade_makes_two_containers_with_version_env_and_annotations():
    hot = {
        "name": "mesh",
        "image": "mesh:v1",
        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "mesh:empty"},
    }
    out = injected(app_pod(), sidecarset("s", [hot]))
    assert names(out) == ["mesh-1", "mesh-2", "app"]
    assert container(out, "mesh-1")["image"] == "mesh:v1"
    assert container(out, "mesh-2")["image"] == "mesh:empty"

    def version_env(env: str, prefix: str) -> dict:
        path = f"metadata.annotations['{prefix}.sidecarset.kruise.io/mesh-2']"
        return {"name": env, "valueFrom": {"fieldRef": {"fieldPath": path}}}

    assert container(out, "mesh-2")["env"] == [
        IS_INJECTED,
        version_env("SIDECARSET_VERSION", "version"),
        version_env("SIDECARSET_VERSION_ALT", "versionalt"),
    ]
    annotations = out["metadata"]["annotations"]
    assert annotations["version.sidecarset.kruise.io/mesh-1"] == "1"
    assert annotations["versionalt.sidecarset.kruise.io/mesh-1"] == "0"
    assert annotations["version.sidecarset.kruise.io/mesh-2"] == "0"
    assert annotations["versionalt.sidecarset.kruise.io/mesh-2"] == "1"
    assert annotations[ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER] == '{"mesh":"mesh-1"}'
    assert json.loads(annotations[ANNOTATION_SIDECARSET_HASH])["s"]["sidecarList"] == ["mesh"]


def test_sort_gate_orders_sidecars_by_name_across_sidecarsets():
    first = sidecarset("a", [{"name": "zz", "image": "z"}])
    second = sidecarset("b", [{"name": "aa", "image": "a"}])
    assert names(injected(app_pod(), first, second)) == ["zz", "aa", "app"]
    assert names(injected(app_pod(), first, second, sort_containers_by_name=True)) == ["aa", "zz", "app"]


def test_two_sidecarsets_injecting_one_name_conflict():
    with pytest.raises(InjectionConflict, match=r'spec.containers\[1\].name: Duplicate value: "sidecar1"'):
        inject(app_pod(), [sidecarset("a", [SIDECAR1]), sidecarset("b", [SIDECAR1])], now=NOW)


def test_reinvocation_is_stable():
    s = sidecarset("s", [SIDECAR1], volumes=[LOG_VOLUME])
    once = injected(app_pod(), s)
    twice = injected(once, s)
    assert twice["spec"] == once["spec"]


@pytest.mark.parametrize(
    ("policy", "existing", "patch", "expected"),
    [
        ("Retain", {"k": "pod"}, {"k": "set", "n": "new"}, {"k": "pod", "n": "new"}),
        ("Overwrite", {"k": "pod"}, {"k": "set"}, {"k": "set"}),
        ("MergePatchJson", {"k": '{"a":1,"b":{"c":2}}'}, {"k": '{"b":{"c":null,"d":3},"e":"<"}'},
         {"k": '{"a":1,"b":{"d":3},"e":"\\u003c"}'}),
        ("MergePatchJson", {}, {"k": '{"a":1}'}, {"k": '{"a":1}'}),
    ],
)  # fmt: skip
def test_patch_pod_metadata(policy, existing, patch, expected):
    s = sidecarset("s", [SIDECAR1], patchPodMetadata=[{"annotations": patch, "patchPolicy": policy}])
    annotations = injected(app_pod(metadata={"annotations": existing}), s)["metadata"]["annotations"]
    assert {k: annotations[k] for k in expected} == expected


def test_patch_pod_metadata_alone_still_changes_the_pod():
    s = sidecarset("s", [], patchPodMetadata=[{"annotations": {"k": "v"}}])
    p = app_pod()
    assert inject(p, [s], now=NOW)
    assert p["metadata"]["annotations"] == {"k": "v"}
    assert names(p) == ["app"]


def test_merge_patch_of_a_non_json_pod_annotation_is_an_error():
    s = sidecarset(
        "s", [SIDECAR1], patchPodMetadata=[{"annotations": {"k": "{}"}, "patchPolicy": "MergePatchJson"}]
    )
    with pytest.raises(InjectionError, match="pod annotation k is not a JSON document"):
        inject(app_pod(metadata={"annotations": {"k": "plain"}}), [s], now=NOW)


def test_nothing_matched_or_inactive_pod_is_untouched():
    p = app_pod()
    assert not inject(p, [], now=NOW)
    finished = app_pod()
    finished["status"] = {"phase": "Succeeded"}
    before = copy.deepcopy(finished)
    assert not inject(finished, [sidecarset("s", [SIDECAR1])], now=NOW)
    assert finished == before


def test_cached_sidecarsets_are_never_modified():
    hot = {
        "name": "mesh",
        "image": "m",
        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "e"},
    }
    sharing = {**SIDECAR1, "shareVolumePolicy": {"type": "enabled"}, "env": [{"name": "X", "value": "1"}]}
    sets = [sidecarset("a", [sharing], volumes=[LOG_VOLUME]), sidecarset("b", [hot])]
    frozen = copy.deepcopy(sets)
    out = injected(
        app_pod(
            containers=[{"name": "app", "image": "a", "volumeMounts": [{"name": "d", "mountPath": "/d"}]}]
        ),
        *sets,
    )
    out["spec"]["volumes"][0]["emptyDir"]["medium"] = "Memory"
    for container in out["spec"]["containers"]:
        container.setdefault("env", []).append({"name": "LATER", "value": "1"})
        for mount in container.get("volumeMounts", []):
            mount["readOnly"] = True
    assert sets == frozen
