#!/usr/bin/env bash
# A single-node Slurm on this machine, for testing a sweep's slurm.sh for real: munged,
# slurmctld and slurmd (Debian's slurm-wlm and munge; `.ci/install-deps` installs them), with a
# configuration in STATE_DIR that needs no systemd and no cgroups (proctrack/linuxproc,
# task/none). Run as root.
#
#   scripts/slurm-single-node.sh start [STATE_DIR]   # prints `export SLURM_CONF=...`
#   scripts/slurm-single-node.sh stop  [STATE_DIR]
#
# Then: `SLURM_CONF=STATE_DIR/slurm.conf sbatch --wait DIR/slurm.sh`. Exit code 2 from
# `start`: Slurm could not be started here (the reason is printed and in STATE_DIR/*.log).
set -euo pipefail
action=${1:-start}
state=${2:-/tmp/beliefscope-slurm}
conf=$state/slurm.conf
host=$(hostname -s)

stop() {
  for pidfile in "$state"/slurmd.pid "$state"/slurmctld.pid "$state"/munged.pid; do
    if [ -s "$pidfile" ]; then
      pid=$(cat "$pidfile")
      kill "$pid" 2>/dev/null || true
      # Wait for it to go, so that a new start finds its ports free.
      for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
      done
      rm -f "$pidfile"
    fi
  done
}

if [ "$action" = stop ]; then
  stop
  exit 0
fi
if [ "$action" != start ]; then
  echo "usage: $0 start|stop [STATE_DIR]" >&2
  exit 1
fi
for tool in munged slurmctld slurmd sbatch scontrol; do
  command -v "$tool" >/dev/null || { echo "slurm: $tool is not installed (bash .ci/install-deps)" >&2; exit 2; }
done
stop
mkdir -p "$state"/spool "$state"/ctld "$state"/munge
chown munge:munge "$state"/munge
chmod 711 "$state"/munge

# munge: its own socket and key in STATE_DIR (the package's key if there is one).
key=$state/munge/munge.key
if [ -r /etc/munge/munge.key ]; then
  install -o munge -g munge -m 400 /etc/munge/munge.key "$key"
else
  dd if=/dev/urandom bs=1 count=1024 2>/dev/null | install -o munge -g munge -m 400 /dev/stdin "$key"
fi
socket=$state/munge/munge.socket
runuser -u munge -- munged --key-file="$key" --socket="$socket" \
  --pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" --seed-file="$state/munge/seed" \
  || { echo "slurm: munged did not start (see $state/munge/munged.log)" >&2; exit 2; }
cp "$state/munge/munged.pid" "$state/munged.pid"

cpus=$(nproc)
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
cat > "$conf" <<EOF
ClusterName=beliefscope
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$conf
slurmctld -f "$conf" || { echo "slurm: slurmctld did not start (see $state/slurmctld.log)" >&2; exit 2; }
slurmd -f "$conf" || { echo "slurm: slurmd did not start (see $state/slurmd.log)" >&2; exit 2; }
for _ in $(seq 1 30); do
  if sinfo -h -o %T 2>/dev/null | grep -qE '^idle'; then
    echo "export SLURM_CONF=$conf"
    exit 0
  fi
  sleep 1
done
echo "slurm: the node did not become idle in 30 s: $(sinfo -h -o '%T %E' 2>&1 | head -1)" >&2
tail -5 "$state"/slurmd.log "$state"/slurmctld.log >&2 || true
exit 2
