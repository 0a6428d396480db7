"""The pool controller's policy core: given the running jobs, their I/O nodes and leases, and
an arrival, departure, lease expiry or tick, which I/O nodes each job holds next and the admin
actions that get there (admit, release, revoke). Pure functions, no OS calls, no threads; the
admin channel (actions.AdminChannel) is where a live pool's daemons come in.
"""
