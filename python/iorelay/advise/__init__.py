"""`iorelay advise`: how many I/O nodes a job should get, from measured results (issue 47).

Pure functions over tables: `table` turns measured cells into one row per pattern, `features`
describes patterns as numbers, `neighbour` is the reference nearest-measured-pattern rule,
`models` the scikit-learn candidates chosen by nested cross-validation, `evaluate` scores a
source by cross-validation, `answer` turns predictions into a not-worse set and a cheapest
choice. `cli` is the command, the only part that reads files.
"""
