"""`benchwright rehearse`: the cloud run on one machine, before anyone pays for it.

moto in server mode is AWS; the stack's resources come from the synthesized CDK template; the real
state machines run the real handlers; ECS RunTask starts the real runner image in a container; RDS
targets get stand-in servers of the same engine on 127.0.0.1; Slack is a local receiver.
"""
