"""The pool controller. Policy core, pure functions with no OS calls and no threads: given the
running jobs, their I/O nodes and leases, and an arrival, departure, lease expiry or tick, which
I/O nodes each job holds next and the admin actions that get there (controller, state, events,
actions). The live pool around it, which touches files, sockets and processes: live (the
controller process and its daemons), daemon_channel (actions.AdminChannel over the daemons'
admin ops), wire (the pool's socket), job_map (a job's map file), join (`iorelay run --pool`),
cli (`iorelay pool`).
"""
