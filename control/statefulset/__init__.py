"""Pure logic of the Advanced StatefulSet controller (upstream ``pkg/controller/statefulset``)."""

from kruise.control.statefulset.predownload import plan_pre_download
from kruise.control.statefulset.scaleplan import plan_scale
from kruise.control.statefulset.update import plan_update

__all__ = ["plan_pre_download", "plan_scale", "plan_update"]
