"""`create broadcastJob`: flag rules, --from's kinds, and the BroadcastJob built from an image or an
AdvancedCronJob whose template is a BroadcastJob."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import createbroadcastjob
from kruise.cli.kubectl_kruise.createbroadcastjob import CreateBroadcastJobError, CreateBroadcastJobOptions
from kruise.cli.kubectl_kruise.parser import build_parser, parse


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (CreateBroadcastJobOptions("b"), "either --image or --from must be specified"),
        (
            CreateBroadcastJobOptions("b", image="busybox", source="acj/a"),
            "either --image or --from must be specified",
        ),
        (
            CreateBroadcastJobOptions("b", source="acj/a", command=("date",)),
            "cannot specify --from and command",
        ),
    ],
)
def test_validate(options, message):
    with pytest.raises(CreateBroadcastJobError, match=message):
        options.validate()


@pytest.mark.parametrize(
    "text", ["acj/a", "advancedcronjob/a", "AdvancedCronJob/a", "advancedcronjobs.apps.kruise.io/a"]
)
def test_from_names_an_advanced_cronjob(text):
    assert createbroadcastjob.resolve_source(text) == "a"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("acj", "from must be an existing advancedCronJob"),
        ("cj/a", r"unknown object type \*v1.CronJob"),
        ("deploy/a", 'the server doesn\'t have a resource type "deploy"'),
    ],
)
def test_from_refuses_other_kinds(text, message):
    with pytest.raises(CreateBroadcastJobError, match=message):
        createbroadcastjob.resolve_source(text)


def test_from_image_runs_the_command_once_per_node():
    options = CreateBroadcastJobOptions("b", image="busybox", command=("date", "-u"))
    assert createbroadcastjob.broadcastjob_from_image(options, "ns") == {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": "b", "namespace": "ns"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "b", "image": "busybox", "command": ["date", "-u"]}],
                    "restartPolicy": "Never",
                }
            }
        },
    }
    bare = createbroadcastjob.broadcastjob_from_image(CreateBroadcastJobOptions("b", image="busybox"), "ns")
    assert bare["spec"]["template"]["spec"]["containers"] == [{"name": "b", "image": "busybox"}]


TEMPLATE_SPEC = {
    "parallelism": 2,
    "template": {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}},
}
ACJ = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "AdvancedCronJob",
    "metadata": {"name": "sweep", "uid": "u1"},
    "spec": {
        "schedule": "0 0 * * *",
        "template": {
            "broadcastJobTemplate": {
                "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
                "spec": TEMPLATE_SPEC,
            }
        },
    },
    "status": {"type": "BroadcastJob"},
}


def test_from_advanced_cronjob_is_owned_and_marked_manual():
    bcj = createbroadcastjob.broadcastjob_from_advancedcronjob("sweep-1", "ns", ACJ)
    assert bcj["metadata"] == {
        "name": "sweep-1",
        "namespace": "ns",
        "annotations": {"cronjob.kubernetes.io/instantiate": "manual", "note": "x"},
        "labels": {"team": "a"},
        "ownerReferences": [
            {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob", "name": "sweep", "uid": "u1"}
        ],
    }
    assert (bcj["kind"], bcj["spec"]) == ("BroadcastJob", TEMPLATE_SPEC)


@pytest.mark.parametrize(("status", "shown"), [({"type": "Job"}, "Job"), ({}, "")])
def test_only_a_broadcastjob_template_by_status_type(status, shown):
    with pytest.raises(
        CreateBroadcastJobError, match=f"from must be a broadcastJob template, but got {shown}$"
    ):
        createbroadcastjob.broadcastjob_from_advancedcronjob("b", "ns", {**ACJ, "status": status})


@pytest.mark.parametrize("kind", ["broadcastJob", "broadcastjob"])
def test_everything_after_double_dash_is_the_command(kind):
    args = parse(build_parser(), ["create", kind, "b", "--image", "busybox", "--", "sh", "-c", "echo --x"])
    assert (args.create_kind, args.name, args.image, args.job_command) == (
        kind, "b", "busybox", ["sh", "-c", "echo --x"]
    )  # fmt: skip
    bare = parse(build_parser(), ["create", kind, "b", "--from=acj/a", "--dry-run"])
    assert (bare.source, bare.dry_run, bare.job_command) == ("acj/a", "client", [])
