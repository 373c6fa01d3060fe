"""Pure logic of the Advanced StatefulSet controller (upstream ``pkg/controller/statefulset``)."""
