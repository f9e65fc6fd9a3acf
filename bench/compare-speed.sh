#!/usr/bin/env bash
# Times `schedlab compare`'s analysis on seed 004's matrix size (48 cases, 5 runs per side, a
# 20-run calibration; t-quantile MDEs and run counts included). The target is under one second.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p schedlab-analysis --bench compare_speed
