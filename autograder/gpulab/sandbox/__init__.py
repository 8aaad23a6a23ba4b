"""Running student code: jail.py (its own process, a cleaned environment, a timeout, resource
limits, and where the OS allows it no network, an unprivileged user and no view of the
instructor's files) and seccomp.py (the jail's system-call filter)."""
