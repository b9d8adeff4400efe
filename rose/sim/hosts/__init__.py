"""Hosts the simulated world's tasks are worked through: the loopback server the real CLIs
talk to, the in-process driver of ROSE's hooks, the arms that keep no store, and the
scoreboard."""
