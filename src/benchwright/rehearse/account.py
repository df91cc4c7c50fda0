"""The AWS account of a rehearsal: moto in server mode on 127.0.0.1, holding what the template declares.

Every process and container reaches it through ``AWS_ENDPOINT_URL``. The resources the workflow reads
(VPC, subnets, security groups, subnet groups, buckets, the Slack secret, the ECS cluster and task
definition, both state machines) are created from the synthesized template, with Refs resolved to what
moto hands back; the Lambda functions are the template's handlers with the template's environment, timeout and memory.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from benchwright.rehearse.principals import principal_roles
from benchwright.rehearse.stack import (
    ACCOUNT,
    REGION,
    Resolver,
    depends_order,
    physical_name,
    resources_of,
)

_CLIENTS_LOCK = threading.Lock()  # boto3's default session is not safe to build clients from at once
DUMMY_ENV = {"AWS_ACCESS_KEY_ID": "rehearsal", "AWS_SECRET_ACCESS_KEY": "rehearsal"}


@dataclass
class Function:
    logical: str
    name: str
    handler: str
    environment: dict[str, str]
    region: str = REGION
    timeout_s: float = 3.0  # the template's Timeout (CloudFormation's default: 3 s)
    memory_mb: int = 128  # the template's MemorySize (CloudFormation's default)
    role_arn: str = ""  # the template's Role: its sandbox signs with a session of it (services/iam.py)
    credentials: dict[str, str] = field(default_factory=dict)  # AWS_ACCESS_KEY_ID ... of that session

    @property
    def arn(self) -> str:
        return f"arn:aws:lambda:{self.region}:{ACCOUNT}:function:{self.name}"

    @property
    def state(self) -> str:
        """``WorkflowLaunchRunnerFunctionDDF0F056`` -> ``LaunchRunner`` (the ASL state it serves)."""
        import re

        m = re.match(r"^(?:Workflow|Api)?([A-Za-z]+?)Function[0-9A-F]{8}$", self.logical)
        return m.group(1) if m else self.logical


@dataclass
class Account:
    """What the rehearsal created in moto, by role."""

    endpoint: str
    resolver: Resolver
    functions: dict[str, Function] = field(default_factory=dict)  # by physical name
    state_machines: dict[str, str] = field(default_factory=dict)  # Benchmark | Suite -> ARN
    schedules: list[dict[str, Any]] = field(default_factory=list)  # nightly targets (arn, input)
    slack_secret_arn: str = ""
    bucket: str = ""
    task_definition: str = ""
    cluster: str = ""
    # the stack's other principals (principals.py): role ARN -> what signs with it on AWS
    principals: dict[str, str] = field(default_factory=dict)
    instance_profiles: dict[str, str] = field(default_factory=dict)  # profile name -> its role's ARN
    role_credentials: dict[str, dict[str, str]] = field(default_factory=dict)  # role ARN -> a session
    _clients: dict[str, Any] = field(default_factory=dict, repr=False)  # service -> client (client())

    @property
    def region(self) -> str:
        return self.resolver.region

    def client(self, service: str) -> Any:
        """One client per service for the whole rehearsal: building a boto3 client costs about 0.1 s
        of CPU (a rehearsal asked for 72), and a built client is safe to share between threads."""
        with _CLIENTS_LOCK:
            built = self._clients.get(service)
            if built is None:
                import boto3

                built = boto3.client(service, region_name=self.region, endpoint_url=self.endpoint)
                self._clients[service] = built
            return built


def create_account(
    template: dict[str, Any], endpoint: str, image: str, slack_url: str, region: str = REGION
) -> Account:
    """Create the template's resources in the moto server at ``endpoint``, in ``region``."""
    resolver = Resolver(template, region=region)
    for name, param in template.get("Parameters", {}).items():
        if name.startswith("ComputeRunnerImageUri"):
            resolver.parameters[name] = image
        elif "ami" in name.lower():
            resolver.parameters[name] = "ami-0rehearsal00000000"
        else:
            resolver.parameters[name] = str(param.get("Default", ""))
    account = Account(endpoint=endpoint, resolver=resolver)
    resources = template.get("Resources", {})
    ec2 = account.client("ec2")
    kinds = {
        "AWS::EC2::VPC",
        "AWS::EC2::Subnet",
        "AWS::EC2::SecurityGroup",
        "AWS::RDS::DBSubnetGroup",
        "AWS::ElastiCache::SubnetGroup",
        "AWS::MemoryDB::SubnetGroup",
        "AWS::S3::Bucket",
        "AWS::SecretsManager::Secret",
        "AWS::ECS::Cluster",
        "AWS::IAM::Role",
        "AWS::IAM::InstanceProfile",
        "AWS::Logs::LogGroup",
        "AWS::EC2::LaunchTemplate",
    }
    wanted = [k for k, v in resources.items() if v.get("Type") in kinds]
    for logical in depends_order(template, wanted):
        _create(account, logical, resources[logical], ec2, slack_url)
    # names the template computes from Lambdas and machines, known before they exist
    for logical in resources_of(template, "AWS::Lambda::Function"):
        name = physical_name(logical, 64)
        resolver.refs[logical] = name
        resolver.attrs[(logical, "Arn")] = f"arn:aws:lambda:{region}:{ACCOUNT}:function:{name}"
    for logical in resources_of(template, "AWS::StepFunctions::StateMachine"):
        name = physical_name(logical, 80)
        arn = f"arn:aws:states:{region}:{ACCOUNT}:stateMachine:{name}"
        resolver.refs[logical] = arn
        resolver.attrs[(logical, "Name")] = name
        resolver.attrs[(logical, "Arn")] = arn
    for logical, res in resources_of(template, "AWS::ECS::TaskDefinition").items():
        account.task_definition = _task_definition(account, logical, res)
    account.principals = principal_roles(template, resolver)
    sfn = account.client("stepfunctions")
    for logical, res in resources_of(template, "AWS::StepFunctions::StateMachine").items():
        props = resolver.resolve(res["Properties"])
        definition = str(props["DefinitionString"])
        for key, value in (props.get("DefinitionSubstitutions") or {}).items():  # what CloudFormation does
            definition = definition.replace("${" + key + "}", str(value))
        created = sfn.create_state_machine(
            name=resolver.attrs[(logical, "Name")],
            definition=definition,
            roleArn=str(props.get("RoleArn") or f"arn:aws:iam::{ACCOUNT}:role/rehearsal"),
        )["stateMachineArn"]
        kind = "Suite" if "Suite" in logical else "Benchmark"
        account.state_machines[kind] = created
    for logical, res in resources_of(template, "AWS::Lambda::Function").items():
        props = res["Properties"]
        handler = str(props.get("Handler", ""))
        if not handler.startswith("functions."):
            continue  # CDK's own custom-resource providers: nothing the workflow calls
        env = {
            k: str(v) for k, v in resolver.resolve(props.get("Environment", {}).get("Variables", {})).items()
        }
        fn = Function(
            logical=logical,
            name=resolver.refs[logical],
            handler=handler,
            environment=env,
            region=region,
            timeout_s=float(props.get("Timeout", 3)),
            memory_mb=int(props.get("MemorySize", 128)),
            role_arn=str(resolver.resolve(props.get("Role", ""))),
        )
        account.functions[fn.name] = fn
    _role_policies(account, template)
    for res in resources_of(template, "AWS::Scheduler::Schedule").values():
        target = resolver.resolve(res["Properties"]["Target"])
        if target["Arn"] in account.state_machines.values():
            account.schedules.append({"name": res["Properties"].get("Name"), **target})
    return account


def _tags(props: dict[str, Any]) -> list[dict[str, str]]:
    return [{"Key": t["Key"], "Value": str(t["Value"])} for t in props.get("Tags", [])]


def _create_ec2(account: Account, logical: str, kind: str, props: dict[str, Any], ec2: Any) -> None:
    """The network (VPC, subnets, security groups) and the runners' launch template."""
    r = account.resolver
    if kind == "AWS::EC2::VPC":
        vpc = ec2.create_vpc(CidrBlock=props["CidrBlock"])["Vpc"]["VpcId"]
        ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
        r.refs[logical] = vpc
        r.attrs[(logical, "VpcId")] = vpc
    elif kind == "AWS::EC2::Subnet":
        sub = ec2.create_subnet(
            VpcId=props["VpcId"], CidrBlock=props["CidrBlock"], AvailabilityZone=props["AvailabilityZone"]
        )["Subnet"]["SubnetId"]
        r.refs[logical] = sub
        r.attrs[(logical, "SubnetId")] = sub
    elif kind == "AWS::EC2::SecurityGroup":
        group = ec2.create_security_group(
            GroupName=physical_name(logical),
            Description=props.get("GroupDescription", logical),
            VpcId=props["VpcId"],
        )["GroupId"]
        r.refs[logical] = group
        r.attrs[(logical, "GroupId")] = group
    elif kind == "AWS::EC2::LaunchTemplate":  # EC2 runners launch from it (providers/aws/launcher.py)
        data = {k: v for k, v in props["LaunchTemplateData"].items() if k != "TagSpecifications"}
        created = ec2.create_launch_template(
            LaunchTemplateName=physical_name(logical, 120), LaunchTemplateData=data
        )
        template_id = created["LaunchTemplate"]["LaunchTemplateId"]
        r.refs[logical] = template_id
        r.attrs[(logical, "LaunchTemplateId")] = template_id
        r.attrs[(logical, "LatestVersionNumber")] = str(created["LaunchTemplate"]["LatestVersionNumber"])


def _create(account: Account, logical: str, res: dict[str, Any], ec2: Any, slack_url: str) -> None:
    r = account.resolver
    kind = res["Type"]
    props = r.resolve(res.get("Properties", {}))
    if kind.startswith("AWS::EC2::"):
        _create_ec2(account, logical, kind, props, ec2)
    elif kind == "AWS::RDS::DBSubnetGroup":
        name = props.get("DBSubnetGroupName") or physical_name(logical)
        account.client("rds").create_db_subnet_group(
            DBSubnetGroupName=name,
            DBSubnetGroupDescription=props.get("DBSubnetGroupDescription", logical),
            SubnetIds=props["SubnetIds"],
        )
        r.refs[logical] = name
    elif kind == "AWS::ElastiCache::SubnetGroup":
        name = props.get("CacheSubnetGroupName") or physical_name(logical)
        account.client("elasticache").create_cache_subnet_group(
            CacheSubnetGroupName=name,
            CacheSubnetGroupDescription=props.get("Description", logical),
            SubnetIds=props["SubnetIds"],
        )
        r.refs[logical] = name
    elif kind == "AWS::MemoryDB::SubnetGroup":
        name = props.get("SubnetGroupName") or physical_name(logical)
        account.client("memorydb").create_subnet_group(SubnetGroupName=name, SubnetIds=props["SubnetIds"])
        r.refs[logical] = name
    elif kind == "AWS::S3::Bucket":
        name = props.get("BucketName") or physical_name(logical)
        where = (
            {}
            if account.region == "us-east-1"
            else {"CreateBucketConfiguration": {"LocationConstraint": account.region}}
        )
        account.client("s3").create_bucket(Bucket=name, **where)
        r.refs[logical] = name
        r.attrs[(logical, "Arn")] = f"arn:aws:s3:::{name}"
        if "Results" in logical:
            account.bucket = name
    elif kind == "AWS::SecretsManager::Secret":
        value = props.get("SecretString", "{}")
        if "Slack" in logical:  # what docs/deploy.md tells the operator to store after deploy
            value = json.dumps({"webhook_url": slack_url})
        arn = account.client("secretsmanager").create_secret(
            Name=props.get("Name") or physical_name(logical), SecretString=value, Tags=_tags(props)
        )["ARN"]
        r.refs[logical] = arn
        if "Slack" in logical:
            account.slack_secret_arn = arn
    elif kind == "AWS::ECS::Cluster":
        name = props.get("ClusterName") or physical_name(logical)
        account.client("ecs").create_cluster(clusterName=name)
        r.refs[logical] = name
        r.attrs[(logical, "Arn")] = f"arn:aws:ecs:{account.region}:{ACCOUNT}:cluster/{name}"
        account.cluster = name
    elif kind == "AWS::IAM::Role":
        name = physical_name(logical, 64)
        account.client("iam").create_role(
            RoleName=name, AssumeRolePolicyDocument=json.dumps(props["AssumeRolePolicyDocument"])
        )
        r.refs[logical] = name
        r.attrs[(logical, "Arn")] = f"arn:aws:iam::{ACCOUNT}:role/{name}"
    elif kind == "AWS::IAM::InstanceProfile":
        name = physical_name(logical, 64)
        iam = account.client("iam")
        iam.create_instance_profile(InstanceProfileName=name)
        for role in props.get("Roles", []):  # an EC2 runner signs as this role (principals.py)
            iam.add_role_to_instance_profile(InstanceProfileName=name, RoleName=str(role))
            account.instance_profiles[name] = f"arn:aws:iam::{ACCOUNT}:role/{role}"
        r.refs[logical] = name
        r.attrs[(logical, "Arn")] = f"arn:aws:iam::{ACCOUNT}:instance-profile/{name}"
    elif kind == "AWS::Logs::LogGroup":
        name = props.get("LogGroupName") or physical_name(logical, 120)
        r.refs[logical] = name


def _role_policies(account: Account, template: dict[str, Any]) -> None:
    """The policies of the roles that sign in a rehearsal (the Lambdas', the runner task's, the EC2
    runner's and the state machines'), once every name they refer to is known: inline ``Policies`` and the
    ``AWS::IAM::Policy`` resources CDK's grants make. AWS managed policies (AWSLambdaBasicExecutionRole,
    AWSLambdaVPCAccessExecutionRole) grant what the Lambda service does for the function (logs, network
    interfaces), not calls a handler makes, and moto does not hold them: they are not attached."""
    iam = account.client("iam")
    wanted = {fn.role_arn.rsplit("/", 1)[-1] for fn in account.functions.values() if fn.role_arn}
    wanted |= {arn.rsplit("/", 1)[-1] for arn in account.principals}

    def document(raw: Any) -> str:
        resolved = account.resolver.resolve(raw)
        for statement in resolved.get("Statement", []):
            for key in ("Resource", "NotResource"):
                if key in statement:
                    statement[key] = _arn_or_placeholder(statement[key])
        return json.dumps(resolved)

    for logical, res in resources_of(template, "AWS::IAM::Role").items():
        name = account.resolver.refs[logical]
        for policy in res["Properties"].get("Policies", []) if name in wanted else []:
            iam.put_role_policy(
                RoleName=name,
                PolicyName=str(policy["PolicyName"]),
                PolicyDocument=document(policy["PolicyDocument"]),
            )
    for logical, res in resources_of(template, "AWS::IAM::Policy").items():
        props = res["Properties"]
        roles = [
            str(role) for role in account.resolver.resolve(props.get("Roles", [])) if str(role) in wanted
        ]
        for role in roles:
            iam.put_role_policy(
                RoleName=role,
                PolicyName=str(props.get("PolicyName", logical)),
                PolicyDocument=document(props["PolicyDocument"]),
            )


def _arn_or_placeholder(value: Any) -> Any:
    """A resource the rehearsal does not create (a log group, a sink table) resolves to no ARN; it
    keeps its place in the statement as a stand-in ARN, so the statement still grants its actions."""
    if isinstance(value, list):
        return [_arn_or_placeholder(v) for v in value]
    text = str(value)
    return text if text == "*" or text.startswith("arn:") else f"arn:aws:rehearsal:::unresolved/{text}"


def _camel(node: Any) -> Any:
    """CloudFormation's PascalCase container definition -> the ECS API's camelCase."""
    if isinstance(node, list):
        return [_camel(v) for v in node]
    if isinstance(node, dict):
        return {k[:1].lower() + k[1:]: _camel(v) for k, v in node.items()}
    return node


def _task_definition(account: Account, logical: str, res: dict[str, Any]) -> str:
    props = account.resolver.resolve(res["Properties"])
    containers = []
    for container in props["ContainerDefinitions"]:
        c = _camel(container)
        c.pop("logConfiguration", None)  # the rehearsal keeps container logs in DIR/containers/
        containers.append(c)
    args: dict[str, Any] = {
        "family": props.get("Family") or physical_name(logical),
        "containerDefinitions": containers,
        "networkMode": props.get("NetworkMode", "awsvpc"),
        "requiresCompatibilities": props.get("RequiresCompatibilities", ["FARGATE"]),
        "cpu": str(props.get("Cpu", "1024")),
        "memory": str(props.get("Memory", "2048")),
    }
    for key, api in (("TaskRoleArn", "taskRoleArn"), ("ExecutionRoleArn", "executionRoleArn")):
        if props.get(key):
            args[api] = props[key]
    arn: str = account.client("ecs").register_task_definition(**args)["taskDefinition"]["taskDefinitionArn"]
    account.resolver.refs[logical] = arn
    return arn


def revoke(account: Account, state: str, action: str) -> None:
    """Deny ``action`` to the role of the function serving ``state`` (the ``revoke`` fault)."""
    fn = next((f for f in account.functions.values() if f.state == state), None)
    if fn is None or not fn.role_arn:
        raise ValueError(f"revoke: no function with a role serves the state {state!r}")
    deny = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": action, "Resource": "*"}]}
    account.client("iam").put_role_policy(
        RoleName=fn.role_arn.rsplit("/", 1)[-1],
        PolicyName="rehearsal-revoke",
        PolicyDocument=json.dumps(deny),
    )


def assume_function_roles(account: Account) -> dict[str, str]:
    """A session of each function's role for its sandbox, as Lambda gives one; access key id -> who."""
    sts = account.client("sts")
    sessions: dict[str, str] = {}
    for fn in account.functions.values():
        if not fn.role_arn:
            continue
        found = sts.assume_role(RoleArn=fn.role_arn, RoleSessionName=fn.name[:64])["Credentials"]
        fn.credentials = {
            "AWS_ACCESS_KEY_ID": found["AccessKeyId"],
            "AWS_SECRET_ACCESS_KEY": found["SecretAccessKey"],
            "AWS_SESSION_TOKEN": found["SessionToken"],
        }
        sessions[found["AccessKeyId"]] = f"{fn.state} ({fn.role_arn.rsplit('/', 1)[-1]})"
    return sessions


def export_environment(account: Account) -> dict[str, str]:
    """What this process needs so its own boto3 calls reach the moto server (the handlers run in
    their sandboxes, each with its function's environment: lambda_pool.lambda_environment)."""
    return {
        **DUMMY_ENV,
        "AWS_DEFAULT_REGION": account.region,
        "AWS_REGION": account.region,
        "AWS_ENDPOINT_URL": account.endpoint,
    }


def apply_environment(env: dict[str, str]) -> dict[str, str | None]:
    """Set ``env`` in os.environ; returns the previous values (for restore)."""
    previous = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    return previous


def restore_environment(previous: dict[str, str | None]) -> None:
    for key, value in previous.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
