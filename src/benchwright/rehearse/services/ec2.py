"""EC2 inside the moto server: the rehearsal is the host of every instance.

- Runners: RunInstances whose user-data runs the runner image (``docker run ... IMAGE COMMAND``). The
  host's setup lines (dnf, systemctl, docker pull) are skipped; the ``docker run`` line runs with this
  machine's engine, its ``-e`` variables and arguments as written; when the container ends the instance
  powers off (InstanceInitiatedShutdownBehavior terminate). TerminateInstances stops it.
- Targets (providers/aws/targets/kinds/ec2/templates): the user-data of a YugabyteDB node or a Redis-protocol server
  starts a stand-in of another engine (standins.py): PostgreSQL for YugabyteDB's YSQL, Redis for
  ARDB / KeyDB / Valkey. It is said in the events and the summary. A YugabyteDB cluster's nodes share
  one stand-in, started with the first node (whose user-data names every master) and deleted with the
  last; a node terminated before the others (node_replace) stops answering at its address until an
  instance on its interface starts again, and a replacement at a new address answers there too. The target's network interfaces get private addresses in 127.0.0.0/8, so the workflow's probe
  and the runner reach the stand-in at the address and port the template uses.
"""

from __future__ import annotations

import base64
import contextlib
import inspect
import random
import re
import shlex
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from benchwright.rehearse.containers import ContainerSpec
from benchwright.rehearse.host_series import (
    start_runner_series,
    stop_runner_series,
    unwatch_volumes,
    watch_volumes,
)
from benchwright.rehearse.metrics import CreditModel
from benchwright.rehearse.principals import credentials_for, profile_role

if TYPE_CHECKING:
    from benchwright.rehearse.hooks import Hooks

YSQL_PORT = 5433  # templates/yugabytedb_3node.sh: --pgsql_proxy_bind_address=$NODE_IP:5433


def docker_run_of(script: str) -> tuple[str, list[str], dict[str, str]] | None:
    """(image, command, environment) of the user-data's ``docker run`` line, or None."""
    for line in script.splitlines():
        words = shlex.split(line) if line.strip().startswith("docker run") else []
        if not words:
            continue
        env: dict[str, str] = {}
        i = 2
        while i < len(words) and words[i].startswith("-"):
            if words[i] in {"-e", "--env"}:
                key, _, value = words[i + 1].partition("=")
                env[key] = value
                i += 2
            elif words[i] in {"--network", "--name", "-v", "--user"}:
                i += 2
            else:
                i += 1
        if i < len(words):
            return words[i], words[i + 1 :], env
    return None


def target_of(script: str) -> tuple[str, list[str], int, str] | None:
    """(engine replaced, node addresses, port, stand-in engine) of a target template's user-data."""
    # the templates' values are shell-quoted words (providers/aws/targets/kinds/ec2/target.py: render_user_data)
    masters = re.search(r"^MASTERS=(\S*)$", script, re.M)
    if masters and "yb-tserver" in script:
        value = (shlex.split(masters.group(1)) or [""])[0]
        hosts = [m.rsplit(":", 1)[0] for m in value.split(",") if m]
        return "yugabytedb", hosts, YSQL_PORT, "postgres"
    port = re.search(r"^export PORT='?(\d+)'?$", script, re.M)
    if port and "Redis-protocol server" in script:  # templates/redis_protocol.sh
        server = next(
            (s for s in ("ardb", "keydb", "valkey") if f"/{s}" in script or f"{s}-server" in script), "redis"
        )
        return server, [], int(port.group(1)), "redis"
    return None


def decode_user_data(user_data: Any) -> str:
    """moto keeps RunInstances' UserData as sent: base64 text (sometimes in a one-item list)."""
    if isinstance(user_data, list):
        user_data = user_data[0] if user_data else ""
    if not user_data:
        return ""
    text = str(user_data)
    with contextlib.suppress(ValueError, UnicodeDecodeError):
        return base64.b64decode(text, validate=True).decode()
    return text


def loopback_address() -> str:
    """A free address of 127.0.0.0/8 (away from 127.0.0.x and 127.0.1.1) for one target interface."""
    for _ in range(100):
        address = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}.{random.randint(2, 254)}"
        with socket.socket() as s, contextlib.suppress(OSError):
            s.bind((address, 0))
            return address
    raise OSError("no free loopback address")


def install(hooks: Hooks) -> None:
    from moto.ec2.models.elastic_network_interfaces import NetworkInterfaceBackend
    from moto.ec2.models.instances import Instance, InstanceBackend

    run = InstanceBackend.__dict__["run_instances"]
    terminate = InstanceBackend.__dict__["terminate_instances"]
    create_eni = NetworkInterfaceBackend.__dict__["create_network_interface"]

    def patched_run(
        backend: Any, image_id: str, count: int, user_data: Any, *args: Any, **kwargs: Any
    ) -> Any:
        hooks.request.iops = {  # moto drops a mapping's Iops, then refuses io1/io2 for want of it
            str(m.get("DeviceName")): int(m["Ebs"]["Iops"])
            for m in kwargs.get("block_device_mappings") or []
            if (m.get("Ebs") or {}).get("Iops")
        }
        try:
            reservation = run(backend, image_id, count, user_data, *args, **kwargs)
        finally:
            hooks.request.iops = {}
        script = decode_user_data(user_data)
        runner = docker_run_of(script)
        target = target_of(script) if runner is None else None
        for instance in reservation.instances:
            if runner is not None:
                start_runner(hooks, backend, instance, runner, profile_of(backend, kwargs))
            elif target is not None:
                start_target(hooks, instance, target)
        return reservation

    def patched_terminate(backend: Any, instance_ids: list[str]) -> Any:
        for instance_id in instance_ids:
            info = hooks.tasks.get(instance_id)
            if info is not None and not info.get("exited"):
                info["stop_requested"] = "TerminateInstances"
                hooks.containers.kill(info["name"])
        stop_targets(hooks, backend, instance_ids)
        return terminate(backend, instance_ids)

    signature = inspect.signature(create_eni)

    def patched_eni(backend: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(backend, *args, **kwargs)
        given = bound.arguments
        if str(given.get("description") or "").startswith("benchwright ") and not given.get(
            "private_ip_address"
        ):
            # a node of providers/aws/targets/kinds/ec2/target.py
            given["private_ip_address"] = loopback_address()
        return create_eni(*bound.args, **bound.kwargs)

    def add_block_device(
        instance: Any,
        size: int,
        device_path: str,
        snapshot_id: str | None,
        encrypted: bool,
        delete_on_termination: bool,
        kms_key_id: str | None,
        volume_type: str | None = None,
    ) -> None:
        volume = instance.ec2_backend.create_volume(
            size=size,
            zone_name=instance._placement.zone,
            snapshot_id=snapshot_id,
            encrypted=encrypted,
            kms_key_id=kms_key_id,
            volume_type=volume_type,
            iops=getattr(hooks.request, "iops", {}).get(device_path),
        )
        instance.ec2_backend.attach_volume(volume.id, instance.id, device_path, delete_on_termination)

    hooks.patch(Instance, "add_block_device", add_block_device)
    hooks.patch(InstanceBackend, "run_instances", patched_run)
    hooks.patch(InstanceBackend, "terminate_instances", patched_terminate)
    hooks.patch(NetworkInterfaceBackend, "create_network_interface", patched_eni)


def start_target(hooks: Hooks, instance: Any, found: tuple[str, list[str], int, str]) -> None:
    """The stand-in of the node's server (shared by a cluster's nodes), on the node's address."""
    from benchwright.rehearse.standins import NodeRedis, YsqlPostgres, local_target

    replaced, hosts, port, engine = found
    hosts = hosts or [str(instance.private_ip)]
    key = "ec2-" + hosts[0].replace(".", "-")
    hooks.target_nodes[instance.id] = key
    if key in hooks.standins:
        server = hooks.standins[key]
        address = str(instance.private_ip)
        if address in getattr(server, "down", ()):  # a replacement on a terminated node's interface
            said = server.nodes_up([address])
            hooks.events.append(f"stand-in {key}: {address} answers again ({instance.id} started; {said})")
        elif hasattr(server, "nodes_up") and address not in server.hosts:  # a replacement at a new address
            said = server.nodes_up([address])
            hooks.events.append(f"stand-in {key}: {address} answers too ({instance.id} started; {said})")
        watch_volumes(hooks, key, instance)
        return
    cls = YsqlPostgres if engine == "postgres" else NodeRedis
    server = cls(local_target(engine), run_id=key, hosts=hosts, node_port=port)
    server.create()
    hooks.standins[key] = server
    hooks.status[key] = "creating"
    model = CreditModel(
        instance_class=str(getattr(instance, "instance_type", "")), storage_type="ebs", size_gb=0
    )
    hooks.publish(key, "AWS/EC2", {"InstanceId": instance.id}, server, model)
    watch_volumes(hooks, key, instance)
    hooks.events.append(
        f"stand-in {engine} for the {replaced} target {instance.id} on {','.join(hosts)}:{port} "
        f"(a stand-in of another engine: {engine} in place of {replaced})"
    )
    hooks.standin_engines.append(f"{replaced} rehearsed with a {engine} stand-in")
    hooks.watch_ready(key, server)


def stop_targets(hooks: Hooks, backend: Any, instance_ids: list[str]) -> None:
    """The stand-in stops with its cluster's last node; a node terminated before the others stops
    answering at its address (node_replace), the others keep the data."""
    by_key: dict[str, list[str]] = {}
    for instance_id in instance_ids:
        key = hooks.target_nodes.pop(instance_id, None)
        if key is not None:
            by_key.setdefault(key, []).append(instance_id)
    for key, ids in by_key.items():
        server = hooks.standins.get(key)
        if key not in hooks.target_nodes.values():  # the cluster's last node
            hooks.stop_standin(key)
        elif server is not None and hasattr(server, "nodes_down"):
            for i in ids:
                unwatch_volumes(hooks, key, backend.get_instance(i))
            addresses = [str(backend.get_instance(i).private_ip) for i in ids]
            said = server.nodes_down(addresses)
            hooks.events.append(
                f"stand-in {key}: {', '.join(addresses)} no longer answers ({', '.join(ids)} terminated; {said})"
            )


def profile_of(backend: Any, kwargs: dict[str, Any]) -> dict[str, str] | None:
    """The instance profile of a RunInstances call: named in the call, else in its launch template
    (moto associates a named profile only after the backend has run, so it is read from the call)."""
    if kwargs.get("iam_instance_profile_name"):
        return {"Name": str(kwargs["iam_instance_profile_name"])}
    if kwargs.get("iam_instance_profile_arn"):
        return {"Arn": str(kwargs["iam_instance_profile_arn"])}
    if kwargs.get("launch_template"):
        data = backend._get_template_from_args(kwargs["launch_template"]).data
        found = data.get("IamInstanceProfile")
        return dict(found) if isinstance(found, dict) else None
    return None


def start_runner(
    hooks: Hooks,
    backend: Any,
    instance: Any,
    found: tuple[str, list[str], dict[str, str]],
    profile: dict[str, str] | None,
) -> None:
    image, command, env = found
    spec = ContainerSpec(
        name=f"bw-{hooks.containers.rehearsal_id}-{instance.id[-8:]}",
        image=image,
        args=command,
        environment={
            **env,
            "AWS_ENDPOINT_URL": hooks.account.endpoint,
            # the instance profile's role, as the host's metadata service hands it to the container
            **credentials_for(hooks.account, profile_role(hooks.account, profile)),
        },
    )
    hooks.trust(spec)
    info: dict[str, Any] = {"name": spec.name, "args": spec.args, "entrypoint": None, "ec2": True}
    hooks.tasks[instance.id] = info
    hooks.containers.start(spec)
    info["started"] = time.time()
    start_runner_series(hooks, instance, spec.name)

    def watch() -> None:
        code = hooks.containers.wait(spec.name)
        stop_runner_series(hooks, instance.id)
        hooks.keep_logs(spec.name)
        info["exit_code"] = code
        info["exited"] = time.time()
        if not info.get("stop_requested"):  # the user-data's trap: shutdown -h now
            try:
                backend.terminate_instances([instance.id])
            except Exception as exc:  # reported: the instance would stay up
                hooks.events.append(f"instance {instance.id} did not power off: {exc}")

    threading.Thread(target=watch, name=f"watch-{spec.name}", daemon=True).start()
