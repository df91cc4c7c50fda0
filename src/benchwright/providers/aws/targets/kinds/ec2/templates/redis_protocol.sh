#!/bin/bash
# Benchwright: a single Redis-protocol server (redis, valkey, keydb, or ARDB built from source).
set -euo pipefail
exec > >(tee /var/log/benchwright-userdata.log) 2>&1
# --- values: data only, each one shell-quoted by render_user_data (never code)
export PORT=$port
SERVER_ARGS=($server_args)
# --- end of values
export DATA=/mnt/d0
DEV=$$(lsblk -dpno NAME,TYPE | awk '$$2=="disk"{print $$1}' | sed -n 2p)
if [ -n "$$DEV" ]; then mkfs.xfs -f "$$DEV"; mkdir -p $$DATA; mount "$$DEV" $$DATA; else mkdir -p $$DATA; fi
if command -v dnf >/dev/null; then dnf install -y $packages; else apt-get update && apt-get install -y $packages; fi
$install_commands
cd $$DATA
nohup $start_command $${SERVER_ARGS[@]+"$${SERVER_ARGS[@]}"} >/var/log/redis-server.log 2>&1 &
