"""When an AdvancedCronJob should run: its effective schedule and the run that is due now.

Upstream never runs a backlog. Of all activations missed since the last scheduled child (or since
the cron job was created), only the most recent one is started; `startingDeadlineSeconds` moves the
start of that window up to `now - startingDeadlineSeconds`, so a run is never started later than
that. When the window holds more than 100 activations (a wedged controller, a skewed clock, a
schedule that never fires) upstream gives up: nothing runs and nothing is requeued until the object
changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from kruise.api.cronschedule import ParsedSchedule, ScheduleError, load_location, parse_standard
from kruise.control.advancedcronjob.cronnext import next_activation

MAX_MISSED_STARTS = 100

TOO_MANY_MISSED = (
    "too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew"
)


class ScheduleProblem(Exception):
    """Why no run can be computed; str() is the message upstream logs. The controller does not requeue."""


def effective_schedule(schedule: str, time_zone: str | None) -> str:
    """upstream's formatSchedule: `spec.timeZone` becomes a `TZ=` prefix.

    A schedule that mentions TZ anywhere is taken as written; a time zone that does not load is
    ignored (validation rejects both combinations, so only objects stored before it meet this).
    """
    if "TZ" in schedule:
        return schedule
    if time_zone is not None:
        try:
            load_location(time_zone)
        except ScheduleError:
            return schedule
        return f"TZ={time_zone} {schedule}"
    return schedule


def parse_effective(schedule: str, time_zone: str | None) -> ParsedSchedule:
    """Parse the effective schedule; a ScheduleProblem carries upstream's "unparsable schedule" text."""
    try:
        return parse_standard(effective_schedule(schedule, time_zone))
    except ScheduleError as err:
        raise ScheduleProblem(f"unparsable schedule {_go_quote(schedule)}: {err}") from None


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class DueRun:
    """The outcome of one look at the schedule."""

    missed: datetime | None
    """The most recent activation in the window (the run to start now), or None."""
    next_run: datetime | None
    """The first activation after now (when to look again), or None if the schedule never fires."""


def due_run(
    schedule: ParsedSchedule,
    last_scheduled: datetime | None,
    created: datetime | None,
    starting_deadline_seconds: int | None,
    now: datetime,
) -> DueRun:
    """The activation to start now (if any) and the next one, as upstream's getNextSchedule.

    All datetimes must be aware; results are in `now`'s zone, which is also the zone a schedule without
    TZ=/timeZone is evaluated in (upstream: the manager's local zone). Raises ScheduleProblem when more
    than 100 activations fall into the window — including a schedule that never fires, for which
    robfig's zero time keeps "matching" until the limit.
    """
    start = last_scheduled or created
    if start is None:
        # Go's zero time: the window reaches back to year 1, far beyond the limit.
        raise ScheduleProblem(TOO_MANY_MISSED)
    earliest = start.astimezone(now.tzinfo)
    if starting_deadline_seconds is not None:
        deadline = now - timedelta(seconds=starting_deadline_seconds)
        earliest = max(earliest, deadline)
    if earliest > now:
        return DueRun(missed=None, next_run=next_activation(schedule, now))
    missed: datetime | None = None
    starts = 0
    moment = next_activation(schedule, earliest)
    while moment is None or moment <= now:
        if moment is None:  # never fires: robfig's zero time would "match" until the limit
            raise ScheduleProblem(TOO_MANY_MISSED)
        missed = moment
        starts += 1
        if starts > MAX_MISSED_STARTS:
            raise ScheduleProblem(TOO_MANY_MISSED)
        moment = next_activation(schedule, moment)
    return DueRun(missed=missed, next_run=next_activation(schedule, now))
