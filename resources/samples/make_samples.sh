#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records the bundled sample: a real CPU replay of a small GPT-style decoder (6 blocks,
# d_model 256, 8 heads, sequence 128, batch 8, dropout 0.1, AdamW), nothing checkpointed,
# three measured steps after one warm-up step.
#   resources/samples/make_samples.sh   (after ./run.sh has built build/bin/peaklens-replay)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=resources/samples/training-step.peaklens
rm -f "$out"
build/bin/peaklens-replay --model gpt --layers 6 --d-model 256 --heads 8 --seq 128 --batch 8 --vocab 2048 \
  --steps 3 --warmup 1 --device cpu --checkpoint none --progress none --out "$out"
