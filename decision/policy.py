"""Policy parameters, selected by name: `met` (MET's Decision Maker, the paper's parameters as
defaults), `tiramola` (CPU thresholds on a running average, no placement), `target-tracking`
(mean CPU at a target, HPA-style) and `static` (never acts). Every default lives here, with
its meaning and unit; the config file's `policy:` section is this model.
"""
from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, model_validator


class TableRule(BaseModel):
    """A rule for one table's partitions (`policy.tables.<table>`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    exclude: bool = Field(
        False, description="Never move this table's partitions; the nodes holding them are "
        "never restarted, drained or terminated (like protected nodes).")
    profile: Literal["read", "write", "read_write", "scan"] | None = Field(
        None, description="Place this table's partitions in this group whatever their request "
        "mix (a fixed profile). None: classified by its rates like every partition.")

    @model_validator(mode="after")
    def _one_rule(self) -> TableRule:
        if self.exclude and self.profile is not None:
            raise ValueError("exclude: true and a profile contradict each other: an excluded "
                             "table is never placed")
        return self


class PolicyConfig(BaseModel):
    """How metctl decides: the policy and its thresholds (fractions are 0..1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["met", "tiramola", "target-tracking", "static"] = Field(
        "met", description="Which policy decides: `met` (MET Stages A-D: sizing, placement, "
        "per-node profiles), `tiramola` (add/remove one node on running-average CPU, no placement "
        "or reconfiguration), `target-tracking` (keep mean CPU at target_cpu, the way Kubernetes' "
        "HPA and AWS target tracking scale; a baseline) or `static` (never acts; a baseline for "
        "comparisons).")

    paper_faithful: bool = Field(
        False, description="`met` only. true: MET's algorithm as the paper writes it (Algorithm 1 "
        "sizing, full LPT re-placement and reconfiguration at every decision; configs/met-paper."
        "yaml). false (default): MET's health rules with the guarded steps below (diagnose, "
        "proportional sizing, verify after acting, scale in on headroom, move only what pays); "
        "see docs/policy.md.")

    # --- Stage A: node health ------------------------------------------------------------
    cpu_high: float = Field(
        0.60, gt=0, le=1, description="A node is overloaded when its CPU use (fraction 0..1) is "
        "at or above this. MET's code: cpu_idle < 40 %.")
    io_wait_high: float = Field(
        0.20, gt=0, le=1, description="A node is overloaded when its CPU I/O wait (fraction 0..1) "
        "is at or above this. MET's code: cpu_wio > 20 %.")
    memory_high: float = Field(
        0.95, gt=0, le=1, description="A node is overloaded when its memory use (used less cache "
        "and buffers, fraction 0..1) is at or above this.")
    cpu_low: float = Field(
        0.10, ge=0, lt=1, description="A node is underloaded when its CPU use is at or below this "
        "(and io_wait is at or below io_wait_low, and it is not overloaded). MET's code: "
        "cpu_idle > 90 %.")
    io_wait_low: float = Field(
        0.05, ge=0, lt=1, description="Underloaded also needs I/O wait at or below this fraction.")
    remove_fraction: float = Field(
        0.5, gt=0, le=1, description="The cluster may shrink by one node only when at least this "
        "fraction of its active nodes is underloaded (and none is overloaded).")
    scale_in_headroom: float = Field(
        0.8, gt=0, le=1, description="...and when the mean CPU spread over one node fewer stays "
        "under cpu_high x this factor, so removing a node does not overload the rest.")

    # --- Stage B: sizing (MET Algorithm 1) -----------------------------------------------
    suboptimal_threshold: float = Field(
        0.5, ge=0, le=1, description="When more than this fraction of active nodes is overloaded, "
        "add `step` nodes straight away (even on the first decision) and double `step`. "
        "MET: 50 %; lower it for sudden peaks.")
    min_nodes: int = Field(
        1, ge=1, description="Never plan fewer active nodes than this.")
    max_nodes: int = Field(
        100, ge=1, description="Never plan more nodes than this; `step` is also capped here.")

    # --- Stage C: classification, grouping, assignment -----------------------------------
    read_threshold: float = Field(
        0.6, ge=0, le=1, description="A partition is read-like (read or scan) when (reads + scans) "
        "/ all requests is strictly above this (MET §5: 60 %).")
    scan_threshold: float = Field(
        0.6, ge=0, le=1, description="A read-like partition is `scan` when scans / (reads + scans) "
        "is strictly above this, else `read` (MET §5: 60 %).")
    write_threshold: float = Field(
        0.6, ge=0, le=1, description="A partition that is not read-like is `write` when writes / "
        "all requests is strictly above this, else `read_write` (MET §5: 60 %).")
    reclassify_after: int = Field(
        2, ge=1, le=1000, description="With MET's full re-placement in the default met "
        "(move_only_what_pays: false): a partition on a node of one class (read, write, "
        "read_write, scan) moves to another class only when its rates put it there at this many "
        "of those plans in a row, so a burst of another kind of request does not restart and "
        "re-place it (1: at once; paper_faithful always re-classifies at once, as MET does).")
    grouping: Literal["count", "load"] = Field(
        "count", description="How many nodes each group gets: in proportion to its share of "
        "partitions (`count`, MET) or of requests (`load`).")

    partition_cap_slack: float = Field(
        0.0, ge=0, le=10, description="MET caps each node at ceil(partitions / nodes) of its "
        "group's partitions; this lets a node hold that many times (1 + slack). With few "
        "partitions per node the tight cap can cost a lot of balance (10 per node: ~24 % over "
        "the lower bound on Zipf loads); 0.1 restores LPT's balance. 0: MET's cap.")
    keep_tolerance: float = Field(
        0.0, ge=0, le=1, description="Sticky LPT: a partition stays on the node it is on when "
        "that node carries at most this fraction of the group's mean node load more than LPT's "
        "least loaded choice. 0 is MET's pure LPT, which re-places nearly every partition "
        "whenever loads shift a little; 0.05 keeps most in place at a small cost in balance.")

    # --- Stage D: reconciliation and the plan --------------------------------------------
    max_moves: StrictInt | StrictFloat | None = Field(
        None, description="Cap on partition moves in one plan: an integer is an absolute count "
        "(>= 0), a float in (0, 1] a fraction of all partitions (like HBase's balancer "
        "maxMovePercent; at least one move). The most valuable moves (most requests per second "
        "brought into place) are kept. None: unlimited.")
    compact_locality_write: float = Field(
        0.70, ge=0, le=1, description="After the plan, a `write` node whose (size-weighted) data "
        "locality is under this gets its non-local partitions major-compacted (MET §5: 70 %).")
    compact_locality_other: float = Field(
        0.90, ge=0, le=1, description="The same for every other profile (MET §5: 90 %): locality "
        "matters more to reads and a major compaction is costly.")

    # --- per-table rules ----------------------------------------------------------------
    tables: dict[str, TableRule] = Field(
        default_factory=dict, description="Per-table rules by table name: `exclude: true` "
        "(never moved) or `profile: read|write|read_write|scan` (a fixed group). Tables not "
        "listed are classified by their rates.")

    # --- the default met (paper_faithful: false): each step switchable --------------------
    diagnose: bool = Field(
        True, description="Name each overloaded node's bottleneck before acting: a node inside "
        "`warmup_s` after the last plan is `transient` (a cold cache is not overload) and a node "
        "whose overload is one hot partition (`split_load_fraction`) is `hot_partition`; "
        "neither triggers a scale-out, since adding nodes helps neither.")
    warmup_s: float = Field(
        300.0, ge=0, description="Seconds after a plan's actions during which load changes are "
        "treated as warm-up (cold caches, moved regions), by the snapshots' taken_at; counted "
        "from the end of the plan when the control loop recorded it (the daemon and "
        "`metctl simulate` do), else from the decision.")
    split_load_fraction: float = Field(
        0.5, gt=0, le=1, description="A partition is hot when its share of its node's CPU alone "
        "is at or above this fraction of one node: moving it only moves the overload.")
    split_hot_partitions: bool = Field(
        True, description="Split the hot partition of a node it overloads (action `split`, the "
        "store's own split point; both halves stay on the node) instead of holding: once it is "
        "two, the next decision can move one half away. A table whose last split did not "
        "spread its load `resplit_tries` times in a row (`resplit_load_fraction`) is not split "
        "again for `resplit_after_s`.")
    resplit_load_fraction: float = Field(
        0.9, gt=0, le=1, description="A split did not spread its table's load when the table's "
        "hottest partition still serves at least this fraction of what the split partition "
        "served (ordered inserts all land in the last region, whatever the split).")
    resplit_tries: int = Field(
        3, ge=1, description="Splits in a row on one table that may fail to spread its load "
        "before the table is left whole for `resplit_after_s`: a narrow hot key range needs a "
        "few halvings before its halves part (a split halves the data, not the load); ordered "
        "inserts never part.")
    resplit_after_s: float = Field(
        3600.0, ge=0, description="Seconds after which a table whose splits did not spread its "
        "load may be split again (its workload may have changed).")
    latency_slo_ms: float | None = Field(
        None, gt=0, description="The tenants' latency objective, ms. When set, a node's "
        "overload asks for capacity (or a move) only while the requests it serves take longer "
        "than this (its rpc_latency_ms: HBase /jmx TotalCallTime_mean, or its 99th percentile "
        "with monitor.hbase_call_time: p99) or calls wait for it "
        "(over 60 in its RPC call queue, or any dropped): a busy CPU that still answers in "
        "time is `within_slo` and held; and the cluster shrinks only while every node answers "
        "within latency_slo_ms x scale_in_latency_fraction. Nodes without a "
        "latency figure are judged on CPU and io_wait alone. null (default): no latency rule. "
        "`metctl simulate` uses the scenario's slo_latency_ms when this is null.")
    latency_gate: bool = Field(
        True, description="Apply latency_slo_ms (when set) as above. false: decide on CPU and "
        "io_wait alone, as MET does, whatever the latency.")
    scale_in_latency_fraction: float = Field(
        0.5, gt=0, le=1, description="Scale in only while every node's rpc_latency_ms is at "
        "most this fraction of latency_slo_ms (\"comfortably under\"; assumption: half leaves "
        "room for the load the removed node's partitions bring).")
    proportional_sizing: bool = Field(
        True, description="Scale out to ceil(sum of node utilisation / target_utilisation) "
        "nodes (utilisation: CPU over cpu_high or io_wait over io_wait_high, the larger), at "
        "least one more node and at most `scale_out_ceiling` more. false: MET's step doubling.")
    scale_out_ceiling: Literal["met_step", "double"] = Field(
        "met_step", description="The most nodes one proportional scale-out may add. `met_step` "
        "(default): MET's step (1, 2, 4 … after consecutive scale-outs). `double`: the larger of "
        "+4 nodes and doubling the cluster (the default scale-up limit of Kubernetes' "
        "HorizontalPodAutoscaler, autoscaling/v2 HPAScalingRules). Measured on the shipped "
        "scenarios (docs/evaluation.md): `double` overshoots whenever every node is saturated "
        "(the demand estimate is then only a lower bound) and, with scale-in one node a "
        "decision, pays for it for the rest of the run: frontier ratio mean 0.862 against "
        "0.915 for `met_step` (sudden-spike 0.689 vs 0.818, staircase 0.921 vs 0.886).")
    target_utilisation: float = Field(
        0.75, gt=0, le=1, description="Proportional sizing aims at this fraction of the "
        "overload marks on every node.")
    verify_after_acting: bool = Field(
        True, description="After a scale-out and its warm-up, compare the requests served with "
        "those before it: when they rose by less than `verify_gain`, add no more nodes while "
        "the load stays there (the cluster is client- or partition-bound); scale-in on "
        "headroom gives the nodes back once none is overloaded.")
    verify_gain: float = Field(
        0.05, ge=0, le=1, description="The least rise (fraction) in requests served that counts "
        "as a scale-out paying off; never more than half the capacity the scale-out added (+1 node "
        "on 20: 2.5 %).")
    scale_in_on_headroom: bool = Field(
        True, description="Remove one node when none is overloaded, at least one is underloaded "
        "and the mean CPU over one node fewer stays under cpu_high x scale_in_headroom (MET's "
        "`remove_fraction` of underloaded nodes is not required). false: MET's rule.")
    scale_in_while_within_slo: bool = Field(
        True, description="Nodes over cpu_high whose requests are still served in time "
        "(`within_slo`) do not block scale_in_on_headroom: the least utilised node goes and its "
        "busy partitions go to the least utilised of the rest first (the coolest nodes). A "
        "tenant that left its busy regions on a few nodes otherwise kept every node bought for "
        "it (tenant-churn: 13 nodes for 15 minutes where 4 served the rest). false: any "
        "overloaded node blocks scale-in.")
    move_only_what_pays: bool = Field(
        True, description="No plan when the size is unchanged and no node is overloaded; a "
        "scale-out moves only partitions off overloaded nodes (largest first, idle ones "
        "stay) onto the new or least loaded nodes, a scale-in only the removed node's "
        "partitions; no restarts and no compactions for balance. false: MET's full "
        "re-placement (LPT, profiles, compactions) at every plan.")
    data_placement: Literal["metctl", "store"] = Field(
        "metctl", description="Who places the data. metctl: metctl moves partitions between "
        "nodes (HBase regions). store: the data store spreads its data itself when a node "
        "joins or leaves (Cassandra's token ranges); metctl only sizes the cluster: a scale-out "
        "launches nodes and moves nothing, a scale-in decommissions one node, nothing is split "
        "or rebalanced. Set to store by datastore.driver: cassandra; needs the default met "
        "(paper_faithful: false, move_only_what_pays: true).")
    move_gain_vs_cost: bool = Field(
        True, description="With move_only_what_pays: a move happens only when the load it takes "
        "off the hotter of its two nodes (utilisation: what the source sheds, less what the "
        "destination rises above it) kept for `move_payback_s` beats its cost: the partition's "
        "share of its node served cold while its data is read back (size_mb / move_mb_s) plus "
        "its offline time (move_offline_s); the relief starts once the data the plan sends the same "
        "node before it has arrived (one node takes data in at move_mb_s). false: any move that "
        "lowers the hotter node.")
    move_payback_s: float = Field(
        600.0, gt=0, description="Seconds over which a move's relief must pay for it: how long "
        "the load a decision sees is assumed to last (assumption: two warm-up windows; the "
        "policy decides again after warmup_s).")
    move_mb_s: float = Field(
        26.0, gt=0, description="MiB/s at which a moved partition's data is read back on its "
        "new node (cache warm-up from HDFS) or streamed to it (stores that copy data): one "
        "sender's streaming rate in the incremental-elasticity paper (210 Mbit/s).")
    move_offline_s: float = Field(
        1.1, ge=0, description="Seconds a partition is unavailable while it moves (measured "
        "on the local HBase 2.6.4: ~1.1 s per region move).")
    predict_cycle_s: float | None = Field(
        None, gt=0, description="The length of the load's cycle, when the operator knows it "
        "(e.g. 86400 for a daily one; None: found in the demand's own record when "
        "detect_cycle, else none). Sized from demand (the default): the forecast is at least "
        "the most demand the last cycle had over the lead time ahead, scaled down when the "
        "demand now is lower than at the same time then (decision/demand_cycle.py): nodes come "
        "before the peak and stay through it; never fewer nodes on a prediction. MET's marks "
        "(size_from_demand: false): for each `predict_bucket_s` of the cycle, the nodes its "
        "demand asked for when capacity was short (ceil(sum utilisation / "
        "target_utilisation)); when the last cycle was short within the next "
        "`predict_lead_s`, it scales out now (at most doubling the cluster) and does not scale "
        "in then; a predicted scale-out is not judged by verify_after_acting.")
    detect_cycle: bool = Field(
        True, description="With size_from_demand and no predict_cycle_s: look for a cycle in "
        "the demand's own record (periods of min_cycle_s to max_cycle_s) and, once its last "
        "period repeated the one before (cycle_match, cycle_swing), forecast as with "
        "predict_cycle_s. A cycle must happen twice to be found.")
    min_cycle_s: float = Field(
        600.0, gt=0, allow_inf_nan=False, description="The shortest cycle looked for, s "
        "(assumption: a cycle shorter than about two scale-out lead times cannot be followed "
        "by booting nodes).")
    max_cycle_s: float = Field(
        14400.0, gt=0, allow_inf_nan=False, description="The longest cycle looked for, s: the "
        "record keeps twice this, at most 1,024 steps of at least 30 s (a daily or weekly "
        "cycle: say so with predict_cycle_s, `policy.prediction.cycle_s`).")
    cycle_match: float = Field(
        0.5, gt=0, allow_inf_nan=False, description="A period is a cycle when the root mean "
        "square of its last two repetitions' difference is at most this share of the last "
        "one's standard deviation (a flat, noisy load reads about 1.4, a ramp over 3; "
        "assumption).")
    cycle_swing: float = Field(
        0.3, ge=0, allow_inf_nan=False, description="... and its demand swings by at least "
        "this share of its mean (a steady load's noise is no cycle to follow; assumption).")
    predict_lead_s: float = Field(
        600.0, gt=0, description="How far ahead the prediction looks: a new node's boot, join "
        "and cache warm-up (~10 min for a node to be fully operational and monitored, tiramola "
        "§3). Must be under half of predict_cycle_s.")
    predict_bucket_s: float = Field(
        300.0, gt=0, description="Width of one remembered slot of the cycle (seconds); the "
        "cycle is remembered in predict_cycle_s / predict_bucket_s slots, at most 4,096 (a week of "
        "5-minute slots is 2,016).")

    # --- the default met: sizing from demand (issue 27; docs/policy.md) ------------------
    size_from_demand: bool = Field(
        True, description="Size the cluster from demand and measured capacity: each node's "
        "demand is its CPU, scaled by what it was asked over what it served when requests "
        "queue or are dropped (rpc_queue_length, rpc_dropped_per_s); a node may run at the "
        "utilisation whose predicted p99 stays within the SLO less slo_headroom (capacity "
        "learned per profile); scale out to the smallest size that holds the demand forecast "
        "over the scale-out lead time, new nodes taking busy partitions off the hottest nodes; "
        "decisions at every sample, a scale-out in flight extended (docs/policy.md). The "
        "default since 2026-11-29: it holds the SLO in more windows than MET's marks on most "
        "open-loop scenarios, for more node-minutes (docs/policy.md, top). false: MET's marks "
        "(cpu_high, proportional_sizing; configs/met-marks.yaml).")
    slo_headroom: float = Field(
        0.2, ge=0, lt=1, description="The margin kept under the latency objective: a node runs "
        "at most at the utilisation whose predicted p99 is latency_slo_ms x (1 - this).")
    max_utilisation: float = Field(
        0.9, gt=0, le=1, description="The most CPU (fraction) a node is planned to run at, "
        "whatever the SLO allows: the monitor's smoothing lags a rising load, and a node at "
        "1.0 has no room for a burst (assumption).")
    min_utilisation: float = Field(
        0.3, gt=0, le=1, description="The least CPU a node is planned to run at when the SLO "
        "leaves less (a slow node still counts for something; assumption).")
    scale_out_lead_s: float = Field(
        420.0, gt=0, allow_inf_nan=False, description="Seconds a new node takes from the "
        "decision to serving, until the cluster's own scale-outs have measured it: a cloud "
        "VM's boot (~300 s) and the RegionServer's join, plus the moves onto it "
        "(assumption). The demand is forecast this far ahead.")
    trend_window_s: float = Field(
        150.0, gt=0, allow_inf_nan=False, description="The demand's slope is the least-squares "
        "line through the demand of this many seconds of decisions (a ramp shows within a few "
        "decisions; the monitor already smooths each metric), or through its latter half when "
        "that rises less (a step, such as a tenant arriving, is a new level once demand stops "
        "rising, not a trend).")
    trend_significance: bool = Field(
        True, description="Until one of the forecast's rises has been judged (forecast_skill; "
        "with forecast_skill false, at every decision), the demand's slope is followed in "
        "proportion to how far it stands out of the noise of the line it is drawn from: x "
        "max(0, 1 - (standard error / slope)^2) (decision/forecast.py, significant). A line "
        "through a cold start's three noisy samples adds nothing; a ramp's is followed nearly "
        "in full. false: the slope in full until its record scales it.")
    trend_persistence_s: float = Field(
        1800.0, gt=0, allow_inf_nan=False, description="How long a demand trend is assumed "
        "to last on average: the forecast follows the slope damped by it (a damped trend, "
        "Gardner & McKenzie 1985). Assumption: half an hour, so over a lead time of minutes a "
        "rise is followed nearly in full (a node too few costs the SLO; one too many costs a "
        "node until the next scale-in).")
    forecast_max_growth: float = Field(
        1.0, ge=0, allow_inf_nan=False, description="The forecast over the lead time is at "
        "most this fraction above today's demand (a slope is not followed to infinity).")
    forecast_skill: bool = Field(
        True, description="With size_from_demand: the forecast's rise is scaled by how far "
        "the rises it forecast over the last forecast_skill_window_s came true "
        "(decision/forecast.py, skill): a slope drawn by noise on a steady load adds nothing "
        "once its forecasts have been judged, a ramp's is followed in full. The forecasts "
        "made while the last scale-in's plan ran are not judged (its moves dip the demand "
        "measured).")
    forecast_skill_window_s: float = Field(
        1200.0, gt=0, allow_inf_nan=False, description="Forecasts made this long before the "
        "last of them came due are judged (assumption: the last twenty minutes say how the "
        "demand moves now).")
    forecast_skill_horizon_s: float | None = Field(
        90.0, gt=0, allow_inf_nan=False, description="The forecasts are judged this far "
        "ahead, or over the horizon they are made for when that is shorter (null: that "
        "horizon, the scale-out lead time). A ramp's forecasts come true within it and win "
        "the trend back soon after the ramp begins; judged over a lead time (~400 s) the "
        "first ones come due when the ramp is half over. Three decisions of 30 s: chosen "
        "among null, 150 and 90 on the open-loop scenarios (docs/policy.md, 'A forecast that "
        "knows its record').")
    forecast_skill_prior: float = Field(
        0.25, ge=0, allow_inf_nan=False, description="The judged record starts as one "
        "forecast of this relative rise that came true in full (assumption: a 25 % rise, "
        "about two forecasts of the size a steady load's noise draws), so a few judged "
        "forecasts neither silence the slope nor leave it whole.")
    capacity_half_life_s: float = Field(
        3600.0, gt=0, allow_inf_nan=False, description="Half-life of what the nodes taught "
        "about their capacity (cost per request class): the mix and the software change "
        "slowly.")
    scale_in_on_forecast: bool = Field(
        True, description="With size_from_demand: scale in when the most of the demand now, "
        "its forecast over the lead time and its peak over scale_in_window_s fits in fewer "
        "nodes with scale_in_band to spare; never while a node is short (requests queue or "
        "are dropped) or answers slower than latency_slo_ms x scale_in_latency_fraction.")
    scale_in_window_s: float = Field(
        300.0, ge=0, allow_inf_nan=False, description="Seconds of demand a scale-in must fit "
        "(the peak of this window; Kubernetes' HPA stabilisation window is 300 s).")
    scale_in_band: float = Field(
        0.1, ge=0, lt=1, description="Hysteresis: a scale-in needs the demand to fit fewer "
        "nodes at (1 - this) of their capacity; more than one node in a decision needs it "
        "at (1 - 2 x this).")
    scale_in_growth: float = Field(
        1.0, ge=0, allow_inf_nan=False, description="A scale-in leaves room for the demand to "
        "rise by this fraction within one scale-out lead time (the time it takes to get a node "
        "back), or by the largest rise over a lead time seen in the last "
        "rise_memory_s, when that is more (assumption until measured: to double, the most one "
        "scale-out decision adds).")
    rise_memory_s: float = Field(
        3600.0, gt=0, allow_inf_nan=False, description="How long the largest rise of the "
        "demand within one lead time is remembered: it fades by half over this (assumption: "
        "the last hour's rises say most about the next).")
    scale_in_min_fraction: float = Field(
        0.2, ge=0, le=1, allow_inf_nan=False, description="A scale-in that removes fewer than "
        "this fraction of the nodes waits until the demand has fit for twice "
        "scale_in_window_s: every scale-in moves busy partitions (cold caches, a moment "
        "offline), so a falling demand is followed in few larger steps, not one node a "
        "decision.")
    scale_in_floor_s: float = Field(
        3600.0, ge=0, allow_inf_nan=False, description="A scale-in after which a node turned "
        "short within warmup_s while the demand stayed where it was (the data no longer fit "
        "the nodes' caches, say) sets a floor: no scale-in below the size before it for this "
        "many seconds.")
    scale_in_move_budget_s: float = Field(
        300.0, ge=0, allow_inf_nan=False, description="More than one node in a scale-in only "
        "while the busy partitions to move off them stream within this many seconds at "
        "move_mb_s.")
    extend_plans: bool = Field(
        True, description="With size_from_demand: while a plan runs the control loop asks the "
        "policy at every sample; a hot partition is split at once and demand whose forecast "
        "outgrew the size the plan leads to launches more nodes into that plan, at most as "
        "many booting as serving or 5 (the executor adds them while the plan still launches). "
        "false: nothing is decided until the plan ends.")
    even_out: bool = Field(
        True, description="With size_from_demand: when one node carries more than "
        "even_tolerance over the mean and is near its capacity, move busy partitions off the "
        "hottest nodes to the coolest, each only when it pays (move_gain_vs_cost).")
    even_tolerance: float = Field(
        0.15, ge=0, allow_inf_nan=False, description="How far above the mean demand a node "
        "may carry before partitions move off it (fraction of the mean).")

    # --- tiramola ------------------------------------------------------------------------
    tiramola_cpu_high: float = Field(
        0.40, gt=0, le=1, description="tiramola adds one node when any node's running-average "
        "CPU is strictly above this.")
    tiramola_cpu_low: float = Field(
        0.15, ge=0, lt=1, description="tiramola removes one node when every node's running-average "
        "CPU is strictly below this.")
    tiramola_window_s: float = Field(
        300.0, gt=0, description="Length in seconds of tiramola's running average (by the "
        "snapshots' taken_at; the current snapshot always counts).")

    # --- target-tracking (Kubernetes HPA / AWS target tracking) ---------------------------
    target_cpu: float = Field(
        0.60, gt=0, le=1, description="target-tracking keeps the active nodes' mean CPU at this: "
        "desired nodes = ceil(nodes x mean cpu / target_cpu) (HPA's algorithm).")
    target_tolerance: float = Field(
        0.10, ge=0, lt=1, description="target-tracking keeps the size while mean cpu / target_cpu "
        "is within this of 1 (HPA's --horizontal-pod-autoscaler-tolerance, default 0.1).")
    target_scale_in_window_s: float = Field(
        300.0, ge=0, allow_inf_nan=False, description="target-tracking scales in only to the "
        "largest size any decision of this many seconds asked for, one node at a time (HPA's "
        "scale-down stabilisation window, default 300 s); it scales out at once.")

    @model_validator(mode="after")
    def _check_consistent(self) -> PolicyConfig:
        # Cross-field rules: a low threshold above its high one makes a node both over- and
        # underloaded, and an empty size range has no valid target.
        if not self.cpu_low < self.cpu_high:
            raise ValueError(f"cpu_low ({self.cpu_low}) must be below cpu_high ({self.cpu_high})")
        if not self.io_wait_low < self.io_wait_high:
            raise ValueError(f"io_wait_low ({self.io_wait_low}) must be below io_wait_high "
                             f"({self.io_wait_high})")
        if not self.tiramola_cpu_low < self.tiramola_cpu_high:
            raise ValueError(f"tiramola_cpu_low ({self.tiramola_cpu_low}) must be below "
                             f"tiramola_cpu_high ({self.tiramola_cpu_high})")
        if not self.min_utilisation <= self.max_utilisation:
            raise ValueError(f"min_utilisation ({self.min_utilisation}) must be at most "
                             f"max_utilisation ({self.max_utilisation})")
        if self.min_nodes > self.max_nodes:
            raise ValueError(f"min_nodes ({self.min_nodes}) must be at most max_nodes "
                             f"({self.max_nodes})")
        if self.data_placement == "store" and self.name == "met" and \
                (self.paper_faithful or not self.move_only_what_pays):
            raise ValueError("data_placement: store (the data store places its data) needs "
                             "paper_faithful: false and move_only_what_pays: true: MET's full "
                             "re-placement moves partitions, which such a store cannot do")
        if not self.min_cycle_s < self.max_cycle_s:
            raise ValueError(f"min_cycle_s ({self.min_cycle_s:g}) must be below max_cycle_s "
                             f"({self.max_cycle_s:g})")
        if self.predict_cycle_s is not None and not math.isfinite(self.predict_cycle_s):
            raise ValueError(f"predict_cycle_s must be a finite number of seconds, got "
                             f"{self.predict_cycle_s}")
        if self.predict_cycle_s is not None and not self.size_from_demand:
            # MET's marks remember the cycle in slots read predict_lead_s ahead
            for name in ("predict_lead_s", "predict_bucket_s"):
                if not math.isfinite(getattr(self, name)):
                    raise ValueError(f"{name} must be a finite number of seconds, got "
                                     f"{getattr(self, name)}")
            if not self.predict_lead_s < self.predict_cycle_s / 2:
                raise ValueError(f"predict_lead_s ({self.predict_lead_s:g}) must be under half of "
                                 f"predict_cycle_s ({self.predict_cycle_s:g}): the slots ahead "
                                 "must come from the last cycle, not this one")
            if not self.predict_bucket_s <= self.predict_lead_s:
                raise ValueError(f"predict_bucket_s ({self.predict_bucket_s:g}) must be at most "
                                 f"predict_lead_s ({self.predict_lead_s:g})")
            if self.predict_cycle_s / self.predict_bucket_s > 4096:
                raise ValueError(f"predict_cycle_s / predict_bucket_s must be at most 4,096 "
                                 f"slots (got {self.predict_cycle_s / self.predict_bucket_s:.0f}): "
                                 "each slot is remembered in the decision memory")
        if isinstance(self.max_moves, int) and self.max_moves < 0:
            raise ValueError(f"max_moves ({self.max_moves}) must be >= 0 (an absolute count)")
        if isinstance(self.max_moves, float) and not (0 < self.max_moves <= 1):
            raise ValueError(f"max_moves ({self.max_moves}) as a float is a fraction of all "
                             "partitions and must be in (0, 1]; write an integer for a count")
        return self

    def move_limit(self, partitions: int) -> int | None:
        """The cap on moves for a cluster of `partitions` partitions (None: unlimited)."""
        if self.max_moves is None:
            return None
        if isinstance(self.max_moves, float):
            return max(1, math.floor(self.max_moves * partitions))
        return self.max_moves


__all__ = ["PolicyConfig", "TableRule"]
