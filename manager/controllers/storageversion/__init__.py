"""Finishes a storage-version change of the Kruise CRDs (an API set switch): every object rewritten at
the storage version, then status.storedVersions trimmed to it (see `kruise.kube.storageversion`)."""

from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.storageversion.controller import NAME, build

SETUP = ControllerSetup(NAME, build)
