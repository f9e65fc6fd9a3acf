#!/usr/bin/env bash
# Times `schedlab compare`'s statistics on seed 004's matrix size (48 cases x 30 samples, bootstrap
# included). The target is under one second.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -p schedlab-report --bench compare_speed
