"""The testbed: a small cluster on one machine (namespaces, capped links, GlusterFS, Slurm),
`iorelay testbed`, and the exploration and demo that run on it (docs/testbed.md)."""
