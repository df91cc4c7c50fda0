#!/bin/sh
# Container entrypoint: the runner's one entry point (benchwright.runner.entry.RUNNER_ENTRYPOINT)
# with every argument ECS or EC2 passes (--plan PLAN --out RESULT); tests/infra/test_runner_argv.py
# checks this line against that constant. The DB password never arrives as an argument: the runner
# reads the secret named by BENCHWRIGHT_DB_SECRET_ARN from Secrets Manager itself.
set -eu
exec python3 -m benchwright.runner.main "$@"
