#!/usr/bin/env bash
# The papers' multi-GPU claims on a machine with several GPUs (nvidia-h200-x2; -x4 for GMT's rows
# split at 4 GPUs): what each stage runs, in the order of one session's device calls. Every stage
# runs a whole table at the call's commit (the 1- and 2-GPU columns in the same call), writing into
# results/<tag>/ in the tree, packed into $OUT by the area script it calls. On a one-GPU machine the
# 2-GPU runs are recorded as skipped ("not run here").
# Before the device calls, here: scripts/device/stage_deps.sh (--mpi for gmt4) and
#   GPUDM_DATA_DIR=../shared/datasets scripts/device/cache_datasets.sh configs/gp_table3.json configs/pitt_table3.json
# carry [".deps.tar.xz", "datasets/cache"], set GPUDM_GIT_SHA and GPUDM_DATA_DIR=$PWD/datasets/cache.
#
#   OUT=$OUT scripts/device/multigpu.sh STAGE        (one stage per device call; each fits 10 minutes)
#     gp35      GP Tables 3 and 4 (gp_rules.sh table3 table4; anew)          ~6-8 min, x2
#     gp5       GP Table 5 (gp_rules.sh table5; anew)                         ~3-5 min, x2
#     pitt      Pittsburgh Tables 3-4 and Fig 6 (pittsburgh.sh table3 table4 fig6)     ~6 min, x2
#     sweep     configs/multigpu_sweep_gp.json and configs/multigpu_sweep_pitt.json: where a
#               second GPU pays (populations 200-5,000, rows 10 %-10x; the call's fixed cost and
#               kernel time beside each point)                                         ~8-10 min, x2
#     gmt4      GMT's rows split at 1, 2 and 4 GPUs (mpi_scaling.sh with MPI_SCALING_DEVICE=cuda,
#               MPI_SCALING_CFGS="gmtrows gmt10mrows"), and the rest of mpi_scaling_gpu at the
#               same commit (MPI_SCALING_CFGS default)                                 2 calls, x4
# Then, here: copy the packed results into results/h200/, python3 scripts/reproduction.py,
# python3 scripts/results_index.py (after git add), and commit.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. "$ROOT/scripts/device/common.sh"
STAGE="${1:?usage: scripts/device/multigpu.sh gp35|gp5|pitt|sweep|gmt4}"
GPUS="$(gpu_count)"
echo "multigpu.sh $STAGE: $GPUS GPU(s) here"
case "$STAGE" in
  gp35) exec bash scripts/device/gp_rules.sh build table3 table4 ;;
  gp5) exec bash scripts/device/gp_rules.sh build table5 ;;
  pitt) exec bash scripts/device/pittsburgh.sh table3 table4 fig6 ;;
  sweep) exec bash scripts/device/tables.sh multigpu_sweep_gp multigpu_sweep_pitt ;;  # (--resume: a cut call goes on)
  gmt4) MPI_SCALING_DEVICE=cuda MPI_SCALING_CFGS="${MPI_SCALING_CFGS:-gmtrows gmt10mrows}" exec bash scripts/device/mpi_scaling.sh 1 2 4 ;;
  *) echo "unknown stage '$STAGE' (gp35, gp5, pitt, sweep, gmt4)" >&2; exit 2 ;;
esac
