"""Planning shared by several kinds: ownership, revisions, pod states, update order, in-place.

A module belongs here when two or more kinds' plans use it; a kind's own rules live in
its folder beside this one."""
