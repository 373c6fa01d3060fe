"""Marks `tests` as a package so test modules can import the shared kit as `tests.kit`.

Only this top level is a package: test folders below stay plain directories, so pytest keeps
importing each test module by its own folder (rootdir-relative names are not needed).
"""
