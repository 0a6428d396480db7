"""`iorelay advise`: how many I/O nodes a job should get, from measured results.

Pure functions over tables: `table` turns measured cells into one row per pattern, `features`
describes patterns as numbers, `sources` holds the reference nearest-measured-pattern rule,
`models` the scikit-learn candidates (chosen by nested cross-validation, or averaged),
`evaluate` scores a source by cross-validation, `answer` turns predictions into a not-worse set
and a cheapest choice, `from_trace` and `from_darshan` read a pattern from a run's records.
`service` (the advice for one pattern, also used by `iorelay run --ionodes auto`), `inputs`,
`cache`, `darshan_input`, `darshan_child` and `cli` are the parts that read files or start
processes.
"""
