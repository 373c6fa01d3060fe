"""The AdvancedCronJob controller: a Job, BroadcastJob or ImageListPullJob per activation of a cron
schedule, concurrency policies, history limits and the cron job's status.
Wiring in `controller`, one pass in `reconciler`."""

from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.advancedcronjob.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("AdvancedCronJob.apps.kruise.io",))
