#!/bin/bash
# Benchwright: one node of a 3-node YugabyteDB cluster, replication factor 3, one node per AZ.
# Placement (cloud.region.zone) comes from instance metadata, so every node declares its own zone.
set -euo pipefail
exec > >(tee /var/log/benchwright-userdata.log) 2>&1
# --- values: data only, each one shell-quoted by render_user_data (never code)
YB_VERSION=$yb_version
YB_BUILD=$yb_build
NODE_IP=$node_ip
MASTERS=$master_addresses
# A first boot names every master; a replacement node (node_replace) starts its master empty, outside
# the quorum, joins the quorum once its servers run, and the replaced node's master leaves it (below).
MASTER_START=$master_start
MASTER_OTHERS=$master_others  # the masters but this node's; a replacement's: the quorum it joins
MASTER_LEAVING=$master_leaving  # a replacement's: the replaced node's address (node_replace)
REPLICATION_FACTOR=$replication_factor
MASTER_FLAGS=($master_flags)
TSERVER_FLAGS=($tserver_flags)
# --- end of values
DATA=/mnt/d0
TOKEN=$$(curl -sf -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
md() { curl -sf -H "X-aws-ec2-metadata-token: $$TOKEN" "http://169.254.169.254/latest/meta-data/$$1"; }
ZONE=$$(md placement/availability-zone)
REGION=$$(md placement/region)
# Data volume: the spec's EBS volume is the second block device.
DEV=$$(lsblk -dpno NAME,TYPE | awk '$$2=="disk"{print $$1}' | sed -n 2p)
if [ -n "$$DEV" ]; then mkfs.xfs -f "$$DEV"; mkdir -p $$DATA; mount "$$DEV" $$DATA; else mkdir -p $$DATA; fi
cd /opt
curl -sfL "https://downloads.yugabyte.com/releases/$${YB_VERSION}/yugabyte-$${YB_VERSION}-$${YB_BUILD}-linux-x86_64.tar.gz" | tar xz
cd "yugabyte-$${YB_VERSION}" && ./bin/post_install.sh
PLACEMENT=(--placement_cloud=aws "--placement_region=$$REGION" "--placement_zone=$$ZONE")
./bin/yb-master --master_addresses="$$MASTER_START" --rpc_bind_addresses="$$NODE_IP:7100" \
  --fs_data_dirs="$$DATA" --replication_factor="$$REPLICATION_FACTOR" "$${PLACEMENT[@]}" \
  $${MASTER_FLAGS[@]+"$${MASTER_FLAGS[@]}"} >/var/log/yb-master.log 2>&1 &
./bin/yb-tserver --tserver_master_addrs="$$MASTERS" --rpc_bind_addresses="$$NODE_IP:9100" \
  --pgsql_proxy_bind_address="$$NODE_IP:5433" --enable_ysql=true --fs_data_dirs="$$DATA" "$${PLACEMENT[@]}" \
  $${TSERVER_FLAGS[@]+"$${TSERVER_FLAGS[@]}"} >/var/log/yb-tserver.log 2>&1 &
$master_join
# Readiness is judged from outside (a TCP probe on 5433 from the workflow), not from here.
