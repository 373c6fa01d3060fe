"""Well-known labels, annotations, env names, condition types, finalizers and event reasons.

These strings are the wire contract with existing OpenKruise clusters and YAML; every other
layer imports them from here so that a key is spelled exactly once. Grouped by owner; append
new keys to the group they belong to (or a new group at the end).
"""

# --- Labels: workloads (CloneSet / Advanced StatefulSet / Advanced DaemonSet / UnitedDeployment) ---
LABEL_SPECIFIED_DELETE = "apps.kruise.io/specified-delete"
LABEL_CLONESET_INSTANCE_ID = "apps.kruise.io/cloneset-instance-id"
LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE = "apps.kruise.io/cloneset-scaling-exclude-preparing-delete"
LABEL_CONTROLLER_REVISION_HASH = "controller-revision-hash"
LABEL_POD_TEMPLATE_HASH = "pod-template-hash"
LABEL_CONTROLLER_HASH = "controller.kubernetes.io/hash"
LABEL_KRUISE_CONTROLLER_REVISION_HASH = "apps.kruise.io/controller-revision-hash"
LABEL_SUBSET_NAME = "apps.kruise.io/subset-name"
LABEL_UNITED_DEPLOYMENT_RESERVED_POD = "apps.kruise.io/united-deployment-reserved-pod"
LABEL_STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
LABEL_POD_INDEX = "apps.kubernetes.io/pod-index"
LABEL_DAEMONSET_NODE_NAME = "daemonset.kruise.io/node-name"

# --- Labels: lifecycle and availability ---
LABEL_LIFECYCLE_STATE = "lifecycle.apps.kruise.io/state"
LIFECYCLE_STATE_PREPARING_NORMAL = "PreparingNormal"
LIFECYCLE_STATE_NORMAL = "Normal"
LIFECYCLE_STATE_PREPARING_UPDATE = "PreparingUpdate"
LIFECYCLE_STATE_UPDATING = "Updating"
LIFECYCLE_STATE_UPDATED = "Updated"
LIFECYCLE_STATE_PREPARING_DELETE = "PreparingDelete"
LABEL_PREFIX_UNAVAILABLE_POD = "unavailable-pod.kruise.io/"

# --- Labels: deletion protection ---
LABEL_DELETION_PROTECTION = "policy.kruise.io/delete-protection"
DELETION_PROTECTION_ALWAYS = "Always"
DELETION_PROTECTION_CASCADING = "Cascading"

# --- Labels: ContainerRecreateRequest ---
LABEL_CRR_POD_UID = "crr.apps.kruise.io/pod-uid"
LABEL_CRR_NODE_NAME = "crr.apps.kruise.io/node-name"
LABEL_CRR_ACTIVE = "crr.apps.kruise.io/active"

# --- Labels: BroadcastJob ---
LABEL_BROADCASTJOB_NAME = "broadcastjob-name"
LABEL_BROADCASTJOB_CONTROLLER_UID = "broadcastjob-controller-uid"

# --- Labels: SidecarSet / image pre-download / NodeImage ---
LABEL_SIDECARSET_CUSTOM_VERSION = "apps.kruise.io/sidecarset-custom-version"
LABEL_PRE_PREDOWNLOAD_CREATED = "apps.kruise.io/pre-predownload-created"
LABEL_IMAGE_PREDOWNLOAD_IGNORED = "apps.kruise.io/image-predownload-ignored"
LABEL_FAKE_NODEIMAGE = "apps.kruise.io/fake-nodeimage"
LABEL_IMAGEPULLJOB_SOURCE_UID = "imagepulljobs.kruise.io/source-uid"

# --- Annotations: in-place update ---
ANNOTATION_INPLACE_UPDATE_STATE = "apps.kruise.io/inplace-update-state"
ANNOTATION_INPLACE_UPDATE_STATE_OLD = "inplace-update-state"
ANNOTATION_INPLACE_UPDATE_GRACE = "apps.kruise.io/inplace-update-grace"
ANNOTATION_INPLACE_UPDATE_GRACE_OLD = "inplace-update-grace"
ANNOTATION_RUNTIME_CONTAINERS_META = "apps.kruise.io/runtime-containers-meta"
# EnhancedLivenessProbe: a pod of a kruise workload asking for it has its containers' livenessProbes
# moved into the probe-context annotation by kruise-webhook (the kubelet then never kills it itself).
ANNOTATION_USING_ENHANCED_LIVENESS = "apps.kruise.io/using-enhanced-liveness"
ANNOTATION_CONTAINER_PROBE_CONTEXT = "apps.kruise.io/container-probe-context"

# --- Annotations: lifecycle ---
ANNOTATION_LIFECYCLE_TIMESTAMP = "lifecycle.apps.kruise.io/timestamp"

# --- Annotations: SidecarSet ---
ANNOTATION_SIDECARSET_HASH = "kruise.io/sidecarset-hash"
ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE = "kruise.io/sidecarset-hash-without-image"
ANNOTATION_SIDECARSET_INJECTED_LIST = "kruise.io/sidecarset-injected-list"
ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE = "kruise.io/sidecarset-inplace-update-state"
ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER = "kruise.io/sidecarset-working-hotupgrade-container"
ANNOTATION_PREFIX_SIDECARSET_VERSION = "version.sidecarset.kruise.io/"
ANNOTATION_PREFIX_SIDECARSET_VERSION_ALT = "versionalt.sidecarset.kruise.io/"
ANNOTATION_SIDECARSET_CANARY = "apps.kruise.io/sidecarset-canary"
ANNOTATION_SIDECARSET_BASE = "apps.kruise.io/sidecarset-base"

# --- Annotations: container launch priority ---
ANNOTATION_CONTAINER_LAUNCH_PRIORITY = "apps.kruise.io/container-launch-priority"
CONTAINER_LAUNCH_PRIORITY_ORDERED = "Ordered"
ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED = "apps.kruise.io/container-launch-priority-completed"

# --- Annotations: PodUnavailableBudget ---
ANNOTATION_RELATED_PUB = "kruise.io/related-pub"
ANNOTATION_RELATED_PUB_NEW = "pub.kruise.io/related-pub"
ANNOTATION_PUB_NO_PROTECT = "pub.kruise.io/no-protect"
ANNOTATION_PUB_PROTECT_OPERATIONS = "kruise.io/pub-protect-operations"
ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS = "pub.kruise.io/protect-total-replicas"
PUB_OPERATION_DELETE = "DELETE"
PUB_OPERATION_EVICT = "EVICT"
PUB_OPERATION_UPDATE = "UPDATE"
PUB_OPERATION_RESIZE = "RESIZE"

# --- Annotations: image pre-download (on workloads) ---
ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM = "apps.kruise.io/image-predownload-parallelism"
ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS = "apps.kruise.io/image-predownload-timeout-seconds"
ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS = (
    "apps.kruise.io/image-predownload-min-updated-ready-pods"
)

# --- Annotations: workloads ---
ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD = "daemonset.kruise.io/progressive-create-pod"
ANNOTATION_SCHEDULED_AT = "apps.kruise.io/scheduled-at"
ANNOTATION_CLONESET_VOLUMECLAIMTEMPLATE_HASH = "kruise.io/cloneset-volumeclaimtemplate-hash"
ANNOTATION_OWNED_BY_ASTS = "apps.kruise.io/owned-by-asts"

# --- Annotations: WorkloadSpread / PersistentPodState / ResourceDistribution ---
ANNOTATION_MATCHED_WORKLOADSPREAD = "apps.kruise.io/matched-workloadspread"
ANNOTATION_WORKLOADSPREAD_IGNORE_PATCH_EXISTING_PODS_METADATA = (
    "workloadspread.kruise.io/ignore-patch-existing-pods-metadata"
)
ANNOTATION_AUTO_GENERATE_PERSISTENT_POD_STATE = "kruise.io/auto-generate-persistent-pod-state"
ANNOTATION_REQUIRED_PERSISTENT_TOPOLOGY = "kruise.io/required-persistent-topology"
ANNOTATION_PREFERRED_PERSISTENT_TOPOLOGY = "kruise.io/preferred-persistent-topology"
ANNOTATION_PERSISTENT_POD_ANNOTATIONS = "kruise.io/persistent-pod-annotations"
ANNOTATION_INJECTED_PERSISTENT_POD_STATE = "kruise.io/injected-persistent-pod-state"
ANNOTATION_RESOURCEDISTRIBUTION_SOURCE = "kruise.io/resourcedistribution.resource.from"
ANNOTATION_RESOURCEDISTRIBUTION_HASHCODE = "kruise.io/resourcedistribution.resource.hashcode"

# --- Annotations: ImagePullJob secret sync / daemon ---
ANNOTATION_IMAGEPULLJOB_REFERENCES = "imagepulljobs.kruise.io/references"
ANNOTATION_IMAGEPULLJOB_SOURCE_KEY = "imagepulljobs.kruise.io/source-key"
ANNOTATION_IMAGEPULLJOB_MODE = "imagepulljobs.kruise.io/mode"
ANNOTATION_PULLING_IMAGE_BY = "apps.kruise.io/pulling-image-by"

# --- Annotations: ContainerRecreateRequest (v1alpha1) ---
ANNOTATION_CRR_SYNC_CONTAINER_STATUSES = "crr.apps.kruise.io/sync-container-statuses"
ANNOTATION_CRR_UNREADY_ACQUIRED = "crr.apps.kruise.io/unready-acquired"

# --- Annotations: PodProbeMarker / enhanced liveness ---
ANNOTATION_PODPROBE = "kruise.io/podprobe"
ANNOTATION_PODPROBEMARKER_LIST = "kruise.io/podprobemarker-list"
ANNOTATION_USING_ENHANCED_LIVENESS = "apps.kruise.io/using-enhanced-liveness"
ANNOTATION_CONTAINER_PROBE_CONTEXT = "apps.kruise.io/container-probe-context"

# --- Pod condition types / readiness gates ---
CONDITION_INPLACE_UPDATE_READY = "InPlaceUpdateReady"
CONDITION_KRUISE_POD_READY = "KruisePodReady"
CONDITION_SIDECARSET_UPGRADABLE = "SidecarSetUpgradable"
CONDITION_SIDECAR_TERMINATED = "SidecarTerminated"
REASON_START_INPLACE_UPDATE = "StartInPlaceUpdate"
KRUISE_POD_READY_KEY_PRE_DELETE_HOOK = "preDeleteHook"
KRUISE_POD_READY_KEY_PRE_UPDATE_HOOK = "preUpdateHook"

# --- Workload status condition types ---
CLONESET_CONDITION_FAILED_SCALE = "FailedScale"
CLONESET_CONDITION_FAILED_UPDATE = "FailedUpdate"
STATEFULSET_CONDITION_FAILED_CREATE_POD = "FailedCreatePod"
STATEFULSET_CONDITION_FAILED_UPDATE_POD = "FailedUpdatePod"

# --- Env names ---
ENV_CONTAINER_PRIORITY = "KRUISE_CONTAINER_PRIORITY"
ENV_CONTAINER_BARRIER = "KRUISE_CONTAINER_BARRIER"
ENV_IS_INJECTED = "IS_INJECTED"
ENV_SIDECARSET_VERSION = "SIDECARSET_VERSION"
ENV_SIDECARSET_VERSION_ALT = "SIDECARSET_VERSION_ALT"
ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT"
ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE"
ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE = "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE"

# --- Manager / webhook process env ---
ENV_POD_NAMESPACE = "POD_NAMESPACE"
ENV_WEBHOOK_PORT = "WEBHOOK_PORT"
ENV_WEBHOOK_CERT_DIR = "WEBHOOK_CERT_DIR"
ENV_WEBHOOK_HOST = "WEBHOOK_HOST"
ENV_WEBHOOK_CERT_WRITER = "WEBHOOK_CERT_WRITER"
ENV_SECRET_NAME = "SECRET_NAME"
ENV_SERVICE_NAME = "SERVICE_NAME"
ENV_CERTS_RENEW_BEFORE = "CERTS_RENEW_BEFORE"
ENV_KRUISE_DAEMON_CONFIG_NS = "KRUISE_DAEMON_CONFIG_NS"
DEFAULT_KRUISE_NAMESPACE = "kruise-system"
DEFAULT_WEBHOOK_PORT = 9876
DEFAULT_WEBHOOK_SECRET_NAME = "kruise-webhook-certs"
DEFAULT_WEBHOOK_SERVICE_NAME = "kruise-webhook-service"

# --- kruise-configuration ConfigMap keys ---
CONFIGMAP_KRUISE_CONFIGURATION = "kruise-configuration"
CONFIG_SIDECARSET_PATCH_POD_METADATA_WHITELIST = "SidecarSet_PatchPodMetadata_WhiteList"
CONFIG_PPS_WATCH_CUSTOM_WORKLOAD_WHITELIST = "PPS_Watch_Custom_Workload_WhiteList"
CONFIG_WORKLOADSPREAD_WATCH_CUSTOM_WORKLOAD_WHITELIST = "WorkloadSpread_Watch_Custom_Workload_WhiteList"

# --- Finalizers ---
FINALIZER_DELETION_PROTECTION = "apps.kruise.io/deletion-protection"
FINALIZER_CRR_UNREADY_ACQUIRED = "crr.apps.kruise.io/unready-acquired"
FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP = "apps.kruise.io/ephemeralcontainers-cleanup"
FINALIZER_NODE_POD_PROBE_CLEANUP = "kruise.io/node-pod-probe-cleanup"

# --- Event reasons ---
EVENT_SUCCESSFUL_CREATE = "SuccessfulCreate"
EVENT_FAILED_CREATE = "FailedCreate"
EVENT_SUCCESSFUL_DELETE = "SuccessfulDelete"
EVENT_FAILED_DELETE = "FailedDelete"
EVENT_SCALE_UP_LIMITED = "ScaleUpLimited"
EVENT_SUCCESSFUL_UPDATE_POD_INPLACE = "SuccessfulUpdatePodInPlace"
EVENT_FAILED_UPDATE_POD_INPLACE = "FailedUpdatePodInPlace"
EVENT_SUCCESSFUL_UPDATE_POD_RECREATE = "SuccessfulUpdatePodReCreate"
EVENT_FAILED_UPDATE_POD_RECREATE = "FailedUpdatePodReCreate"
EVENT_FAILED_UPDATE = "FailedUpdate"
EVENT_FAILED_UPDATE_PVC = "FailedUpdatePVC"
EVENT_CREATED_IMAGE_PULL_JOB = "CreatedImagePullJob"
EVENT_FAILED_CREATE_IMAGE_PULL_JOB = "FailedCreateImagePullJob"
EVENT_JOB_COMPLETE = "JobComplete"
EVENT_CONTINUE = "Continue"
EVENT_PAUSED = "Paused"
EVENT_TOO_MANY_ACTIVE_PODS = "TooManyActivePods"
EVENT_DUPLICATE_POD_CREATED_ON_SAME_NODE = "DuplicatePodCreatedOnSameNode"
EVENT_DEADLINE_EXCEEDED = "DeadlineExceeded"
EVENT_NOT_UPGRADABLE_PODS = "NotUpgradablePods"
EVENT_NO_PODS = "NoPods"
EVENT_CALCULATE_EXPECTED_POD_COUNT_FAILED = "CalculateExpectedPodCountFailed"
EVENT_NOT_DELETED = "NotDeleted"
EVENT_PUB_PREVENT_POD_DELETION = "PubPreventPodDeletion"
EVENT_PULL_IMAGE_SUCCEED = "PullImageSucceed"
EVENT_PULL_IMAGE_FAILED = "PullImageFailed"
EVENT_SIDECAR_TERMINATOR = "SidecarTerminator"
EVENT_RESET_CONTAINER_SUCCEED = "ResetContainerSucceed"
EVENT_RESET_CONTAINER_FAILED = "ResetContainerFailed"
