"""Starting iorelayd daemons: on this machine (local), as Slurm steps on the I/O nodes of an
allocation (slurm), or over ssh on listed hosts (ssh); node_daemon runs on the I/O node itself."""
