"""Alarms that page a human: failed executions, leaked resources (from the janitor) and spend.

Spend has two guards: an AWS Budgets daily cost budget (the account's real bill, all services) and an
alarm on the Price stage's own estimate (metric RunCostUSD summed per day), which fires the same day
instead of after billing data lands."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_budgets as budgets
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subs
from constructs import Construct

from benchwright.providers.aws import names
from infra.config import StageConfig
from infra.workflow import Workflow

# functions/_common.py publishes EMF metrics with powertools: namespace Benchwright, one dimension
# "service". A stage has its own account-region metric space only through its functions' names, so
# two stages in one account share these metrics (the alarms then watch both).
METRIC_DIMENSIONS = {"service": "benchwright"}


class Monitoring(Construct):
    """SNS alarm topic + three alarms + a daily cost budget."""

    def __init__(self, scope: Construct, cid: str, *, stage: StageConfig, workflow: Workflow) -> None:
        super().__init__(scope, cid)
        self.topic = sns.Topic(
            self,
            "Alarms",
            display_name=f"Benchwright {stage.name} alarms",
            master_key=kms.Alias.from_alias_name(self, "SnsKey", "alias/aws/sns"),
            enforce_ssl=True,
        )
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                actions=["sns:Publish"],
                principals=[iam.ServicePrincipal("budgets.amazonaws.com")],
                resources=[self.topic.topic_arn],
            )
        )
        if stage.budget.alarm_email:
            self.topic.add_subscription(subs.EmailSubscription(stage.budget.alarm_email))
        action = actions.SnsAction(self.topic)

        self.alarms: dict[str, cloudwatch.Alarm] = {}
        for name, machine in (("Benchmark", workflow.benchmark), ("Suite", workflow.suite)):
            self.alarms[f"{name}Failed"] = machine.metric_failed(period=cdk.Duration.minutes(5)).create_alarm(
                self,
                f"{name}ExecutionsFailed",
                alarm_description=f"A {name.lower()} workflow execution failed",
                threshold=1,
                evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )
        leaked = cloudwatch.Metric(
            namespace=names.METRICS_NAMESPACE,
            metric_name=names.METRIC_LEAKED,
            dimensions_map=METRIC_DIMENSIONS,
            statistic="Maximum",
            period=cdk.Duration.hours(1),
        )
        self.alarms["Leaked"] = leaked.create_alarm(
            self,
            "LeakedResources",
            alarm_description="The janitor found run resources past their expires-at tag",
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        spend = cloudwatch.Metric(
            namespace=names.METRICS_NAMESPACE,
            metric_name=names.METRIC_RUN_COST,
            dimensions_map=METRIC_DIMENSIONS,
            statistic="Sum",
            period=cdk.Duration.days(1),
        )
        self.alarms["Spend"] = spend.create_alarm(
            self,
            "DailySpend",
            alarm_description=f"Estimated run cost today is above {stage.budget.daily_usd} USD",
            threshold=stage.budget.daily_usd,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        for alarm in self.alarms.values():
            alarm.add_alarm_action(action)

        budgets.CfnBudget(
            self,
            "DailyBudget",
            budget=budgets.CfnBudget.BudgetDataProperty(
                budget_name=f"benchwright-{stage.name}-daily",
                budget_type="COST",
                time_unit="DAILY",
                budget_limit=budgets.CfnBudget.SpendProperty(amount=stage.budget.daily_usd, unit="USD"),
                cost_filters={"TagKeyValue": [f"user:{names.STAGE_TAG}${stage.name}"]},
            ),
            notifications_with_subscribers=[
                budgets.CfnBudget.NotificationWithSubscribersProperty(
                    notification=budgets.CfnBudget.NotificationProperty(
                        comparison_operator="GREATER_THAN",
                        notification_type="ACTUAL",
                        threshold=100,
                        threshold_type="PERCENTAGE",
                    ),
                    subscribers=[
                        budgets.CfnBudget.SubscriberProperty(
                            subscription_type="SNS", address=self.topic.topic_arn
                        )
                    ],
                )
            ],
        )
