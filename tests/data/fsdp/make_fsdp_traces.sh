#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Records the traces in this directory: examples/train_small.py on the CPU, once in one
# process (unsharded.peaklens) and once as two ranks sharding it with FSDP2 over gloo
# (rank0.peaklens, rank1.peaklens). tst_sharding predicts each rank's peak from the
# unsharded trace and compares it with the rank's own. From the repository root, after
# ./run.sh has built build/ and installed PyTorch:
#
#     PATH=$HOME/.cache/peaklens/torch-<version>/bin:$PATH tests/data/fsdp/make_fsdp_traces.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cli=build/bin/peaklens-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model="examples/train_small.py --steps 2 --device cpu --width 256 --layers 6 --batch-size 8"
"$cli" record --backend torch --out "$work/one" -- python3 $model
"$cli" record --backend torch --out "$work/fsdp" -- torchrun --nproc-per-node 2 $model --fsdp
cp "$work"/one/*.peaklens "$here/unsharded.peaklens"
cp "$work"/fsdp/rank0-*.peaklens "$here/rank0.peaklens"
cp "$work"/fsdp/rank1-*.peaklens "$here/rank1.peaklens"
