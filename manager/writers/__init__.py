"""Writers shared by the workload controllers: the only code that turns a planned pod change into API calls.

`status.StatusWriter` is the one status write of a custom resource (skip when equal, clear dropped
fields, merge patch, one conflict rule); `expectations` the one "may this reconcile act yet?" preamble;
`pods.PodWriter` holds the conflict-safe pod writes (object, status, condition patches, lifecycle state);
`inplace.InPlaceWriter` is the one in-place update sequence that CloneSet, SidecarSet, Advanced StatefulSet
and Advanced DaemonSet all go through, so its ordering rules live in a single place;
`predownload.PreDownloadWriter` creates and cleans up the image pre-download ImagePullJobs
of CloneSet, Advanced StatefulSet and Advanced DaemonSet; `revisions.RevisionWriter` stores and prunes the
ControllerRevisions of CloneSet and Advanced StatefulSet.
"""
