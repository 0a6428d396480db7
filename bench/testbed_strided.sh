#!/usr/bin/env bash
# On an up testbed (iorelay testbed up; >= 2 compute hosts, >= 1 I/O node): fio, 8 jobs on each of
# node1 and node2, 1D-strided 8 KiB O_DIRECT writes to one shared file on GlusterFS, direct vs
# through one I/O node (iorelay run inside salloc) per scheduler, alternating, REPS repetitions;
# prints the aggregate MiB/s of each run, the median, and the daemon's requests per dispatch.
#   bash bench/testbed_strided.sh [REPS=3] [SCHEDULERS="aioli fifo"]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPS=${1:-3}
SCHEDULERS=${2:-aioli fifo}
export SLURM_CONF=/run/iorelay-testbed/slurm/slurm.conf
S=/run/iorelay-testbed/shared # the same path on every host and in the root namespace
[[ -f $SLURM_CONF ]] || { echo "no testbed up (iorelay testbed up)" >&2; exit 1; }
W=$(mktemp -d "$S/strided-XXXX")
JOBS_PER_HOST=8
BS=8192
WRITES=128 # per job: 16 jobs x 128 x 8 KiB = 16 MiB per run
cat >"$W/job.sh" <<JOB
#!/bin/sh
# one host's jobs: global job g = SLURM_NODEID * $JOBS_PER_HOST + j writes at g * $BS, stride 16
exec fio --name=strided --filename=\$1 --ioengine=psync --direct=1 \\
  --rw=write:$(((2 * JOBS_PER_HOST - 1) * BS)) --bs=$BS --numjobs=$JOBS_PER_HOST \\
  --offset=\$((SLURM_NODEID * $JOBS_PER_HOST * $BS)) --offset_increment=$BS \\
  --size=$((WRITES * 2 * JOBS_PER_HOST * BS)) --io_size=$((WRITES * BS)) \\
  --group_reporting --output-format=json --output=\$2.\$SLURM_NODEID.json
JOB
chmod +x "$W/job.sh"
# The file exists at its full size before the jobs start: a job that finds it too short lays it
# out again (unlink + create), and the other host's open then fails with ESTALE.
presize() { truncate -s $((WRITES * 2 * JOBS_PER_HOST * BS + 2 * JOBS_PER_HOST * BS)) "$1"; sleep 1.5; }
for rep in $(seq 1 "$REPS"); do
  presize "$W/direct-$rep.dat"
  timeout 300 srun -N2 -w node1,node2 "$W/job.sh" "$W/direct-$rep.dat" "$W/res-direct-$rep" >/dev/null
  for sched in $SCHEDULERS; do
    mkdir -p "$W/root-$sched-$rep"
    presize "$W/root-$sched-$rep/f.dat"
    timeout 300 salloc -N3 -w node1,node2,ion1 --quiet .venv/bin/iorelay run --ionode-hosts ion1 \
      --scheduler "$sched" --shared-dir "$W" --root "$W/root-$sched-$rep" --prefix /fwd \
      --no-preload -- sh -c "srun --exclude=\$IORELAY_IONODE_HOSTS -N2 -n2 \
      $PWD/.venv/bin/iorelay exec -- $W/job.sh /fwd/f.dat $W/res-$sched-$rep" \
      >"$W/run-$sched-$rep.log" 2>&1
  done
done
.venv/bin/python - "$W" "$REPS" direct $SCHEDULERS <<'PY'
import glob, json, re, statistics, sys
work, reps, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for p in paths:
    runs = []
    for rep in range(1, reps + 1):
        jobs = [json.load(open(f))["jobs"][0] for f in glob.glob(f"{work}/res-{p}-{rep}.*.json")]
        assert len(jobs) == 2 and all(j["error"] == 0 for j in jobs), f"{p} rep {rep} failed"
        runs.append(sum(j["write"]["bw_bytes"] for j in jobs) / 2**20)
    per_dispatch = []
    for rep in range(1, reps + 1):
        if p != "direct":
            log = open(f"{work}/run-{p}-{rep}.log").read()
            per_dispatch += re.findall(r"mean_requests_per_dispatch\D+([\d.]+)", log)[:1]
    extra = f"; requests per dispatch {', '.join(per_dispatch)}" if per_dispatch else ""
    print(f"{p:7} MiB/s {', '.join(f'{r:.1f}' for r in runs)}; median "
          f"{statistics.median(runs):.1f}{extra}")
PY
rm -rf "$W"
