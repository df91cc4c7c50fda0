#!/bin/sh
# Container entrypoint: every argument goes to `benchwright runner` (--plan PLAN --out RESULT).
# The DB password arrives as BENCHWRIGHT_DB_PASSWORD (an ECS secret), never as an argument.
set -eu
exec benchwright runner "$@"
