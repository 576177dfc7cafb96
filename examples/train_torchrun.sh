#!/usr/bin/env bash
# Launches GPT-2 fine-tuning on 2 nodes × 8 GPUs with torchrun (run this on every node).
# Profile it: node dist/cli.js profile examples/train_torchrun.sh --model gpt2 --system dgx-a100
set -euo pipefail

NNODES=2
GPUS_PER_NODE=8
MASTER_ADDR=${MASTER_ADDR:-10.0.0.1}

torchrun \
  --nnodes=$NNODES \
  --nproc_per_node=${GPUS_PER_NODE} \
  --rdzv_id=gpt2-ft \
  --rdzv_backend=c10d \
  --rdzv_endpoint=$MASTER_ADDR:29500 \
  train.py \
    --model_name_or_path gpt2 \
    --per_device_train_batch_size 8 \
    --bf16
