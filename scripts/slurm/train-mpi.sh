#!/usr/bin/env bash
# A Slurm batch job that trains one swarm over P MPI ranks (srun starts them; each rank trains
# a shard and rank 0 merges them into the run file, docs/cluster.md).
# Submit from the repository root of a build with MPI (TURBANET_MPI, libopenmpi-dev):
#
#   sbatch --ntasks=8 --cpus-per-task=4 scripts/slurm/train-mpi.sh configs/spirals.yaml runs/spirals.h5
#
# Options after OUT.h5 go to turbanet train. A job stopped by its time limit or scancel
# (SIGTERM to the ranks) keeps every rank's shard; continue it with any number of tasks:
#
#   sbatch --ntasks=4 scripts/slurm/train-mpi.sh configs/spirals.yaml runs/spirals.h5 --resume runs/spirals.ckpt.h5
#
#SBATCH --job-name=turbanet-mpi
#SBATCH --signal=TERM@120
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: sbatch --ntasks=P [--cpus-per-task=T] $0 CONFIG OUT.h5 [TRAIN OPTIONS...]" >&2
  exit 2
fi
config="$1" out="$2"
shift 2
turbanet="${TURBANET:-$PWD/build/turbanet}"
# One training thread per CPU Slurm gives each task.
srun "$turbanet" train "$config" --out "$out" --threads "${SLURM_CPUS_PER_TASK:-1}" "$@"
