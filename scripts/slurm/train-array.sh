#!/usr/bin/env bash
# A Slurm job array that trains one swarm in K shards, one array task each, then merges them
# in a job that waits for the whole array (turbanet train --shard k/K, turbanet merge;
# docs/cluster.md). Submit from the repository root:
#
#   scripts/slurm/train-array.sh configs/spirals.yaml 8 runs/spirals.h5
#
# Each task gets the CPUs Slurm gives it (--cpus-per-task) as training threads. Extra sbatch
# options go in SBATCH_ARGS (e.g. SBATCH_ARGS="--partition=cpu --time=02:00:00").
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 CONFIG K OUT.h5" >&2
  exit 2
fi
config="$1" shards="$2" out="$3"
turbanet="${TURBANET:-$PWD/build/turbanet}"
stem="${out%.h5}"
# shellcheck disable=SC2086  # SBATCH_ARGS: several options
array_id="$(sbatch --parsable ${SBATCH_ARGS:-} --array="0-$((shards - 1))" --job-name=turbanet-shards \
  --wrap="'$turbanet' train '$config' --out '$out' --shard \${SLURM_ARRAY_TASK_ID}/$shards --threads \${SLURM_CPUS_PER_TASK:-1}")"
parts=()
for ((k = 0; k < shards; ++k)); do parts+=("'${stem}.shard-$k-of-$shards.h5'"); done
# shellcheck disable=SC2086
sbatch ${SBATCH_ARGS:-} --dependency="afterok:$array_id" --job-name=turbanet-merge \
  --wrap="'$turbanet' merge '$out' ${parts[*]}"
echo "submitted array $array_id ($shards shards) and its merge into $out"
