"""Settings of the control loop: how often it samples and decides, when it holds, and how it
backs off after an error. (Smoothing belongs to the monitor, node bounds to the policy, the
completeness rule — the fraction of nodes that must be fresh — to the monitor's settings.)"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from decision.policies import policy_of
from decision.policy import PolicyConfig


class LoopSettings(BaseModel):
    """The `loop:` section of the config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sample_interval_s: float = Field(
        30.0, gt=0, description="Seconds between two samples of every metric source (MET §6.1: 30 s, "
        "the period tiramola uses too).")
    decision_interval_samples: int | None = Field(
        None, ge=1, description="Samples gathered (since the last decision or actuation) before "
        "a decision. null: the policy's own pace: every sample for the default met and "
        "target-tracking (they smooth over every sample since the last plan and hold by their "
        "own rules: a growing queue is acted on at once), 6 (every 3 minutes, MET §6.1) for "
        "met-paper and tiramola.")
    executor_tick_s: float = Field(
        5.0, gt=0, description="Seconds between two executor ticks while a plan is carried out "
        "(each tick starts what may start and observes progress; it never blocks).")
    scale_in_stabilization_s: float = Field(
        0.0, ge=0, description="A plan that removes nodes is carried out only when every decision "
        "for this many seconds wanted to remove nodes (Kubernetes' HPA uses 300 s). 0: act on the "
        "first such decision, as MET §6.4 did.")
    cooldown_after_scale_out_s: float = Field(
        0.0, ge=0, description="Seconds after a scale-out plan finished during which plans that "
        "change the cluster size are held. The history is cleared after every actuation anyway, "
        "so the next decision comes decision_interval_samples samples later (MET §4.1); this adds to it.")
    error_backoff_s: tuple[float, ...] = Field(
        (5.0, 10.0, 30.0, 60.0), min_length=1, description="Seconds to wait after 1, 2, 3 … "
        "consecutive failed iterations (a bad tick is logged and held on); the last value repeats.")
    memory_path: str | None = Field(
        "metctl-state/memory.json", description="File the decision memory (step, first decision "
        "done, policy history) is persisted to after every decision; None keeps it in memory only.")

    @field_validator("error_backoff_s")
    @classmethod
    def _positive(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if any(x < 0 for x in v):
            raise ValueError("back-off delays must be >= 0 seconds")
        return v

    def samples_per_decision(self, policy: PolicyConfig) -> int:
        """decision_interval_samples, or the policy's own pace when it is null."""
        if self.decision_interval_samples is not None:
            return self.decision_interval_samples
        return policy_of(policy).pace(policy)  # decision/policies.py says why

    def backoff(self, failures: int) -> float:
        """Delay after `failures` consecutive failures (1 = the first)."""
        seq = self.error_backoff_s
        return seq[min(max(failures, 1), len(seq)) - 1]
