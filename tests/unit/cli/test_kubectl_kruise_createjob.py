"""`create job`: flag rules and the Job built from an image or a (advanced) cron job."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import createjob
from kruise.cli.kubectl_kruise.createjob import CreateJobError, CreateJobOptions
from kruise.cli.kubectl_kruise.parser import build_parser, parse


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (CreateJobOptions("j"), "either --image or --from must be specified"),
        (
            CreateJobOptions("j", image="busybox", source="acj/a"),
            "either --image or --from must be specified",
        ),
        (CreateJobOptions("j", source="acj/a", command=("date",)), "cannot specify --from and command"),
    ],
)
def test_validate(options, message):
    with pytest.raises(CreateJobError, match=message):
        options.validate()


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("acj/a", createjob.ADVANCED_CRONJOB),
        ("advancedcronjob/a", createjob.ADVANCED_CRONJOB),
        ("advancedcronjobs.apps.kruise.io/a", createjob.ADVANCED_CRONJOB),
        ("cj/a", createjob.CRONJOB),
        ("cronjob/a", createjob.CRONJOB),
    ],
)
def test_resolve_source(text, source):
    target = createjob.resolve_source(text)
    assert (target.workload, target.name) == (source, "a")


def test_resolve_source_errors():
    with pytest.raises(CreateJobError, match="from must be an existing cronjob"):
        createjob.resolve_source("acj")
    with pytest.raises(CreateJobError, match='resource type "deploy"'):
        createjob.resolve_source("deploy/a")


def test_job_from_image_runs_the_command_once():
    job = createjob.job_from_image(CreateJobOptions("j", image="busybox", command=("date", "-u")), "ns")
    assert job == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "j", "image": "busybox", "command": ["date", "-u"]}],
                    "restartPolicy": "Never",
                }
            }
        },
    }


ACJ = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "AdvancedCronJob",
    "metadata": {"name": "nightly", "uid": "u1"},
    "spec": {
        "schedule": "0 0 * * *",
        "template": {
            "jobTemplate": {
                "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
                "spec": {
                    "backoffLimit": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                },
            }
        },
    },
}


def test_job_from_advanced_cronjob_is_owned_and_marked_manual():
    job = createjob.job_from_source(createjob.resolve_source("acj/nightly"), ACJ, "run-1", "ns")
    assert job["metadata"] == {
        "name": "run-1",
        "namespace": "ns",
        "annotations": {"cronjob.kubernetes.io/instantiate": "manual", "note": "x"},
        "labels": {"team": "a"},
        "ownerReferences": [
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "AdvancedCronJob",
                "name": "nightly",
                "uid": "u1",
            }
        ],
    }
    assert job["spec"] == ACJ["spec"]["template"]["jobTemplate"]["spec"]


def test_broadcast_job_templates_cannot_become_jobs():
    broadcast = {**ACJ, "spec": {"template": {"broadcastJobTemplate": {"spec": {}}}}}
    with pytest.raises(CreateJobError, match="from must be a job template, but got BroadcastJob"):
        createjob.job_from_source(createjob.resolve_source("acj/nightly"), broadcast, "run-1", "ns")


def test_everything_after_double_dash_is_the_command():
    args = parse(build_parser(), ["create", "job", "j", "--image", "busybox", "--", "sh", "-c", "echo --x"])
    assert (args.name, args.image, args.job_command) == ("j", "busybox", ["sh", "-c", "echo --x"])
    bare = parse(build_parser(), ["create", "job", "j", "--from=acj/a", "--dry-run"])
    assert (bare.source, bare.dry_run, bare.job_command) == ("acj/a", "client", [])
