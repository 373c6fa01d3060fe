"""CloneSet rollout arithmetic and plans (pure; the controller in kruise.manager performs the I/O)."""

from kruise.control.cloneset.predownload import plan_pre_download
from kruise.control.cloneset.scale import plan_scale
from kruise.control.cloneset.update import plan_update

__all__ = ["plan_pre_download", "plan_scale", "plan_update"]
