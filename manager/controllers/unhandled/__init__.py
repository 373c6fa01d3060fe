"""Warns on every Kruise object that no running controller reconciles: a kind that is served but does
nothing must say so where the user looks (`kubectl describe`, `kubectl get events`), not stay silent."""

from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.unhandled.controller import NAME, build

SETUP = ControllerSetup(NAME, build)
