"""Processes ROSE starts: detached jobs, and the plumbing of the kept graph server's
socket."""
