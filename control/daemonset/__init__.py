"""Advanced DaemonSet plans (pure; the controller in kruise.manager performs the I/O)."""

from kruise.control.daemonset.history import plan_history
from kruise.control.daemonset.manage import plan_manage
from kruise.control.daemonset.predownload import plan_pre_download
from kruise.control.daemonset.rollingupdate import plan_rolling_update

__all__ = ["plan_history", "plan_manage", "plan_pre_download", "plan_rolling_update"]
